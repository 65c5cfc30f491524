#!/bin/sh
# Makes the seed corpora for every certsign-fuzz target in OUT (one folder per target) from real
# tools: openssl req/x509 for certificates, openssl pkcs12 -export, openssl cms -sign, and small
# JSON samples of each remote API. Also writes OUT/trust-anchor.pem, the CA every seed chains to.
# Usage: make-seeds.sh OUT
set -eu
out=${1:?usage: make-seeds.sh OUT}
password=fuzz-password              # FuzzSeeds.pkcs12Password
content='certsign fuzz content'     # FuzzSeeds.cmsContent (plus a newline)
rm -rf "$out"
mkdir -p "$out/work"
cd "$out/work"
for target in pkcs12-right-password pkcs12-wrong-password certificate cms-verify fmp-client cryptopro-client \
              emulator-fmp emulator-cryptopro pdf-verify timestamp ocsp-response; do
  mkdir -p "../$target"
done
ssl() { openssl "$@" >/dev/null 2>&1 || { echo "make-seeds: openssl $1 failed" >&2; exit 1; }; }
# seed TARGET NAME FORMAT [ARGS]: a seed written with printf (the first byte picks call or route)
seed() { target=$1 name=$2; shift 2; printf "$@" > "../$target/$name"; }

# Certificates: a CA, an RSA-2048 leaf and a P-256 leaf.
printf 'keyUsage=critical,digitalSignature,nonRepudiation\nextendedKeyUsage=emailProtection\n' > leaf.ext
ssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -subj "/CN=Fuzz CA/O=certsign" -days 30
ssl req -newkey rsa:2048 -nodes -keyout rsa.key -out rsa.csr -subj "/CN=Fuzz RSA signer/O=certsign"
ssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ec.key -out ec.csr -subj "/CN=Fuzz EC signer"
ssl x509 -req -in rsa.csr -CA ca.pem -CAkey ca.key -CAcreateserial -extfile leaf.ext -days 30 -out rsa.pem
ssl x509 -req -in ec.csr -CA ca.pem -CAkey ca.key -CAcreateserial -extfile leaf.ext -days 30 -out ec.pem
cp ca.pem ../trust-anchor.pem
for name in ca rsa ec; do
  cp $name.pem ../certificate/$name.pem
  ssl x509 -in $name.pem -outform DER -out ../certificate/$name.der
done
cat rsa.pem ca.pem > ../certificate/bundle.pem

# PKCS#12: default (AES-256-CBC, PBKDF2, SHA-256 MAC), legacy RC2/3DES, unencrypted, no MAC, EC,
# low iteration counts (fast to open, so the fuzzer gets further per second).
p12() { name=$1; shift; ssl pkcs12 -export -passout "pass:$password" -out "../pkcs12-right-password/$name.p12" "$@"; }
p12 rsa-default -inkey rsa.key -in rsa.pem -certfile ca.pem -name "fuzz rsa"
p12 rsa-iter1 -inkey rsa.key -in rsa.pem -iter 1 -maciter
p12 ec-default -inkey ec.key -in ec.pem -certfile ca.pem
p12 ec-legacy -inkey ec.key -in ec.pem -legacy
p12 ec-nomac -inkey ec.key -in ec.pem -nomac -iter 1
p12 ec-plain -inkey ec.key -in ec.pem -keypbe NONE -certpbe NONE -iter 1
p12 certs-only -nokeys -in ca.pem -iter 1
# GOST R 34.10-2012 (when the gost engine is installed): 256- and 512-bit keys under the same CA,
# PKCS#12 with TC26 PBES2 (gost89 / Kuznyechik) and a Streebog MAC, as openssl -engine gost writes.
gost=no
if openssl genpkey -engine gost -algorithm gost2012_256 -pkeyopt paramset:A -out gost256.key >/dev/null 2>&1; then
  gost=yes
  ssl genpkey -engine gost -algorithm gost2012_512 -pkeyopt paramset:A -out gost512.key
  for bits in 256 512; do
    ssl req -engine gost -new -md_gost12_$bits -key gost$bits.key -out gost$bits.csr -subj "/CN=Fuzz GOST $bits signer"
    ssl x509 -engine gost -req -in gost$bits.csr -CA ca.pem -CAkey ca.key -CAcreateserial -extfile leaf.ext -days 30 -out gost$bits.pem
    cp gost$bits.pem ../certificate/gost$bits.pem
  done
  p12 gost256-gost89 -engine gost -inkey gost256.key -in gost256.pem -keypbe gost89 -certpbe gost89 -macalg md_gost12_256 -iter 1 -maciter
  p12 gost512-kuznyechik -engine gost -inkey gost512.key -in gost512.pem -keypbe kuznyechik-ctr-acpkm -certpbe kuznyechik-ctr-acpkm -macalg md_gost12_512 -iter 1 -maciter
else
  echo "make-seeds: no gost engine (libengine-gost-openssl): GOST seeds left out" >&2
fi
cp ../pkcs12-right-password/* ../pkcs12-wrong-password/

# CMS: detached and attached, RSA (PKCS#1 v1.5 and PSS) and ECDSA, with and without attributes.
printf '%s\n' "$content" > content.txt
cms() { name=$1; shift; ssl cms -sign -binary -in content.txt -outform DER -out "../cms-verify/$name.der" "$@"; }
cms rsa-detached -signer rsa.pem -inkey rsa.key -certfile ca.pem
cms rsa-pss-attached -signer rsa.pem -inkey rsa.key -nodetach -keyopt rsa_padding_mode:pss
cms ec-detached -signer ec.pem -inkey ec.key
cms ec-attached-noattr -signer ec.pem -inkey ec.key -nodetach -noattr
cms ec-cades -signer ec.pem -inkey ec.key -cades
if [ $gost = yes ]; then
  cms gost256-cades -engine gost -signer gost256.pem -inkey gost256.key -cades
  cms gost512-attached -engine gost -signer gost512.pem -inkey gost512.key -nodetach
fi

# Remote API answers: byte 0 = answer kind (low 3 bits) | status index << 4 (0 = 200, 4 = 400, 5 = 401,
# 6 = 403, 7 = 404, 9 = 500), see ClientTargets.
cert=$(openssl x509 -in ec.pem -outform DER | base64 -w0)
sig=$(base64 -w0 < ../cms-verify/ec-detached.der)
seed fmp-client auth '\000{"token":"t","refresh_token":"r"}'
seed fmp-client certificates '\001{"certificates":[{"id":12831,"subject":"CN=x","issuer":"CN=y","serial":"01","not_before":"2026-01-01T00:00:00Z","not_after":"2027-01-01T00:00:00Z","has_pin":true,"certificate":"%s"}]}' "$cert"
seed fmp-client sign '\002{"signature_id":121}'
seed fmp-client signs '\003{"signs":[{"signature_id":121,"resource":"r","table":"t","column":"c","hhive_id":1,"certificate_id":12831,"created_at":"2026-01-01T00:00:00Z","signature":"%s"}]}' "$sig"
seed fmp-client remove '\004{}'
seed fmp-client error-403 '\142{"status":"error","http":{"status":403},"errors":[{"code":"wrong_pin","description":"wrong PIN"}]}'
seed fmp-client error-404 '\164{"errors":[{"code":"not_found","description":"no signature"}]}'
seed fmp-client error-401 '\121{"detail":"token expired"}'
seed cryptopro-client token '\000{"access_token":"a","expires_in":3600,"token_type":"Bearer"}'
seed cryptopro-client certificates '\001[{"ID":12831,"DName":"CN=x","CertificateBase64":"%s","Status":{"Value":"Active"},"IsDefault":true,"HasPin":true,"FriendlyName":"f"}]' "$cert"
seed cryptopro-client sign '\002"%s"' "$sig"
seed cryptopro-client error-400 '\102{"Message":"wrong PIN"}'
seed cryptopro-client oauth-error '\100{"error":"invalid_grant","error_description":"bad password"}'

# Emulator requests: byte 0 = route (EmulatorTargets.fmpRoutes / cryptoProRoutes); route 0 takes
# "METHOD /path\n" from the input.
dss=/api/v1/dss/Leonid_environment/Leonid_project
seed emulator-fmp obtain '\001environment=Leonid_environment&project=Leonid_project&username=Leonid&password=123123&device_id=d'
seed emulator-fmp refresh '\002{"refresh_token":"r"}'
seed emulator-fmp certificates '\003{"password":"Saprun123"}'
seed emulator-fmp sign '\004{"resource":"GetBudgetPlanning","table":"ПланированиеБюджета","params":{},"column":"Номер","hhive_id":1,"password":"Saprun123","certificate_id":12831,"certificate_pin":"123"}'
seed emulator-fmp signs '\005'
seed emulator-fmp remove '\000DELETE %s/signs/121/\n' "$dss"
seed emulator-fmp raw-certificates '\000POST %s/certificates/\n{"password":"Saprun123"}' "$dss"
seed emulator-cryptopro token '\001grant_type=password&username=Leonid&password=123123&client_id=cryptopro.cloud.csp&resource=urn:cryptopro:dss:signserver:signserver'
seed emulator-cryptopro certificates '\002'
seed emulator-cryptopro sign '\003{"Content":"aGVsbG8=","Signature":{"Type":"CAdES","Parameters":{"CADESType":"BES","IsDetached":"True","Hash":"False"},"CertificateId":12831,"PinCode":"123"}}'
seed emulator-cryptopro sign-hash '\003{"Content":"LCa0a2j/xo/5m0U8HTBBNBNCLXBkg7+g+YpeiGJm564=","Signature":{"Type":"CAdES","Parameters":{"CADESType":"BES","IsDetached":"True","Hash":"True"},"CertificateId":0,"PinCode":"123"}}'
seed emulator-cryptopro raw-token '\000POST /STS/oauth/token/\ngrant_type=password'

# PDFs: a hand-written one, qpdf's classic, object-stream and linearized versions, and (when pyHanko
# is installed) a PAdES signature by the RSA seed signer over the object-stream one.
printf '%%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%%%EOF\n' > ../pdf-verify/hand.pdf
qpdf --empty --pages ../pdf-verify/hand.pdf -- ../pdf-verify/classic.pdf >/dev/null 2>&1 || true
qpdf --object-streams=generate ../pdf-verify/classic.pdf ../pdf-verify/object-streams.pdf >/dev/null 2>&1 || true
qpdf --linearize ../pdf-verify/classic.pdf ../pdf-verify/linearized.pdf >/dev/null 2>&1 || true
python3 - ../pdf-verify/object-streams.pdf ../pdf-verify/pades.pdf <<'PY' >/dev/null 2>&1 || true
import sys
from pyhanko.sign import signers
from pyhanko.sign.fields import SigSeedSubFilter
from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
signer = signers.SimpleSigner.load('rsa.key', 'rsa.pem', ca_chain_files=('ca.pem',))
with open(sys.argv[1], 'rb') as f, open(sys.argv[2], 'wb') as out:
    signers.sign_pdf(IncrementalPdfFileWriter(f), signers.PdfSignatureMetadata(field_name='Seed', subfilter=SigSeedSubFilter.PADES),
                     signer=signer, output=out)
PY
# RFC 3161: a TSA certificate (critical timeStamping EKU) under the CA; replies and bare tokens from
# openssl ts -reply for queries without a nonce (the target's own request has one), SHA-256 and
# SHA-512, and a rejection (SHA-1 is not among the TSA's digests).
printf 'keyUsage=critical,digitalSignature\nextendedKeyUsage=critical,timeStamping\n' > tsa.ext
ssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout tsa.key -out tsa.csr -subj "/CN=Fuzz TSA"
ssl x509 -req -in tsa.csr -CA ca.pem -CAkey ca.key -CAcreateserial -extfile tsa.ext -days 30 -out tsa.pem
printf '01\n' > tsa.serial
printf '[ tsa ]\ndefault_tsa = fuzz\n[ fuzz ]\nserial = tsa.serial\nsigner_cert = tsa.pem\ncerts = ca.pem\nsigner_key = tsa.key\nsigner_digest = sha256\ndefault_policy = 1.2.3.4.1\ndigests = sha256, sha512\naccuracy = secs:1\ness_cert_id_alg = sha256\n' > tsa.cnf
ssl ts -query -data content.txt -sha256 -cert -no_nonce -out q256.tsq
ssl ts -query -data content.txt -sha512 -no_nonce -out q512.tsq
ssl ts -query -data content.txt -sha1 -no_nonce -out q1.tsq
ssl ts -reply -config tsa.cnf -queryfile q256.tsq -out ../timestamp/reply-sha256.tsr
ssl ts -reply -config tsa.cnf -queryfile q256.tsq -token_out -out ../timestamp/token-sha256.der
ssl ts -reply -config tsa.cnf -queryfile q512.tsq -out ../timestamp/reply-sha512-nocert.tsr
openssl ts -reply -config tsa.cnf -queryfile q1.tsq -out ../timestamp/reply-rejected.tsr >/dev/null 2>&1 || true

# OCSP: responses of openssl's own responder (no nonce) for the RSA leaf, good and revoked, and a
# bare malformedRequest status.
cp rsa.pem ../ocsp-leaf.pem
serial=$(openssl x509 -in rsa.pem -noout -serial | cut -d= -f2)
printf 'V\t351231000000Z\t\t%s\tunknown\t/CN=Fuzz RSA signer\n' "$serial" > good.idx
printf 'R\t351231000000Z\t260101000000Z\t%s\tunknown\t/CN=Fuzz RSA signer\n' "$serial" > revoked.idx
ssl ocsp -issuer ca.pem -cert rsa.pem -no_nonce -reqout ocsp.req
ssl ocsp -index good.idx -rsigner ca.pem -rkey ca.key -CA ca.pem -reqin ocsp.req -respout ../ocsp-response/good.der -ndays 30
ssl ocsp -index revoked.idx -rsigner ca.pem -rkey ca.key -CA ca.pem -reqin ocsp.req -respout ../ocsp-response/revoked.der -ndays 30
printf '\060\003\012\001\001' > ../ocsp-response/malformed-request-status.der

cd .. && rm -rf work
