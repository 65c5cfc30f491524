"""Signs a document with a key of the trusted-list test PKI, as the tests' independent signer.

Usage: python3 sign.py DOCUMENT OUTPUT SIGNER [TIMESTAMP_TIME]

Writes a detached CAdES signature (DER) of DOCUMENT made by pyHanko with certs/SIGNER.cert.pem and
keys/SIGNER.key.pem, embedding the issuer's certificate. With TIMESTAMP_TIME (ISO 8601, UTC), it
also carries a signature timestamp made at that time by the test PKI's TSA (pyHanko's
DummyTimeStamper with a fixed time): a proof that the signature existed then.
"""

import asyncio
import os
import sys
import warnings
from datetime import datetime

warnings.simplefilter("ignore")
from asn1crypto import cms  # noqa: E402
from pyhanko.keys import load_cert_from_pemder, load_private_key_from_pemder  # noqa: E402
from pyhanko.sign import signers, timestamps  # noqa: E402
from pyhanko_certvalidator.registry import SimpleCertificateStore  # noqa: E402
from pyhanko.sign.signers.pdf_cms import PdfCMSSignedAttributes  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ISSUERS = {"qc-signer": "qc-ca", "qc-signer-nosscd": "qc-ca", "qc-signer-old": "qc-ca-old"}


def cert(label):
    return load_cert_from_pemder(os.path.join(HERE, "certs", f"{label}.cert.pem"))


def key(label):
    return load_private_key_from_pemder(os.path.join(HERE, "keys", f"{label}.key.pem"), passphrase=None)


async def main(document, output, signer_label, at=None):
    issuer = ISSUERS[signer_label]
    signer = signers.SimpleSigner(
        signing_cert=cert(signer_label),
        signing_key=key(signer_label),
        cert_registry=SimpleCertificateStore.from_certs([cert(issuer)]),
    )
    timestamper = None
    attributes = None
    if at is not None:
        when = datetime.fromisoformat(at.replace("Z", "+00:00"))
        timestamper = timestamps.DummyTimeStamper(
            tsa_cert=cert("tsa"),
            tsa_key=key("tsa"),
            certs_to_embed=SimpleCertificateStore.from_certs([cert("qc-ca")]),
            fixed_dt=when,
        )
        attributes = PdfCMSSignedAttributes(signing_time=when)
    with open(document, "rb") as f:
        data = f.read()
    signed = await signer.async_sign_general_data(
        data, "sha256", detached=True, use_cades=True, timestamper=timestamper, signed_attr_settings=attributes
    )
    assert isinstance(signed, cms.ContentInfo)
    with open(output, "wb") as f:
        f.write(signed.dump())


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
