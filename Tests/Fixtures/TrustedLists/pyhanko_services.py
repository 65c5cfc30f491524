"""pyHanko's reading of a trusted list, as the tests' judge: `python3 pyhanko_services.py TL.xml`.

Prints one JSON array: every CA/QC and QTST service period pyHanko's eutl_parse grants
(read_qualified_service_definitions: the current status when granted, and each granted entry of
the service history), as {"type", "name", "from", "until" (null when open), "certificates" (SHA-256
of each DER certificate, hex)}, sorted. It does not check the list's signature.
"""

import hashlib
import json
import sys
import warnings

warnings.simplefilter("ignore")
from pyhanko.sign.validation.qualified import eutl_parse  # noqa: E402


def main(path):
    with open(path, encoding="utf-8") as f:
        services = eutl_parse.read_qualified_service_definitions(f.read())
    rows = []
    try:
        while True:
            info = next(services).base_info
            rows.append(
                {
                    "type": info.service_type,
                    "name": info.service_name,
                    "from": info.valid_from.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "until": info.valid_until.strftime("%Y-%m-%dT%H:%M:%SZ") if info.valid_until else None,
                    "certificates": sorted(hashlib.sha256(c.dump()).hexdigest() for c in info.provider_certs),
                }
            )
    except StopIteration as end:
        if end.value:
            print(f"pyHanko could not read every service: {end.value}", file=sys.stderr)
            return 1
    rows.sort(key=lambda row: (row["type"], row["name"], row["from"]))
    print(json.dumps(rows, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
