"""pyHanko's qualification assessment, as the tests' judge: `python3 pyhanko_assess.py TL.xml LEAF CA TIME`.

Reads the TL with eutl_parse (signature not checked), builds the path CA -> LEAF from
certs/LEAF.cert.pem (or, when LEAF is a signed PDF, from its first signature's signer certificate as
pyHanko reads it) and certs/CA.cert.pem, runs QualificationAssessor.check_entity_cert_qualified
at TIME (ISO 8601, UTC) and prints one line: "qualified=0|1 qscd=0|1 type=qct_esign|qct_eseal|qct_web".
"""

import os
import sys
import warnings
from datetime import datetime

warnings.simplefilter("ignore")
from pyhanko.keys import load_cert_from_pemder  # noqa: E402
from pyhanko.pdf_utils.reader import PdfFileReader  # noqa: E402
from pyhanko.sign.validation.qualified import assess, eutl_parse  # noqa: E402
from pyhanko_certvalidator.authority import CertTrustAnchor  # noqa: E402
from pyhanko_certvalidator.path import ValidationPath  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main(tl, leaf, ca, when):
    with open(tl, encoding="utf-8") as f:
        registry, errors = eutl_parse.trust_list_to_registry_unsafe(f.read())
    if errors:
        print(f"pyHanko could not read every service: {errors}", file=sys.stderr)
        return 1
    certs = {ca: load_cert_from_pemder(os.path.join(HERE, "certs", f"{ca}.cert.pem"))}
    if leaf.endswith(".pdf"):
        with open(leaf, "rb") as f:
            certs[leaf] = PdfFileReader(f).embedded_signatures[0].signer_cert
    else:
        certs[leaf] = load_cert_from_pemder(os.path.join(HERE, "certs", f"{leaf}.cert.pem"))
    path = ValidationPath(trust_anchor=CertTrustAnchor(certs[ca]), interm=[], leaf=certs[leaf])
    moment = datetime.fromisoformat(when.replace("Z", "+00:00"))
    status = assess.QualificationAssessor(registry).check_entity_cert_qualified(path, moment=moment).status
    print(f"qualified={int(status.qualified)} qscd={int(status.qc_key_security.is_qscd)} type={status.qc_type.value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
