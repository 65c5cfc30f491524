"""Makes the trusted-list test data (ETSI TS 119 612 v2): run `python3 generate.py` in this folder.

certomancer issues the test PKI of pki.yml (certificates in certs/); lxml writes the lists' XML and
xmlsec1 (Debian's `xmlsec1`) signs each one: an enveloped XML-DSig over the whole document (URI ""),
exclusive C14N, RSA (the LOTL) or ECDSA P-256 (the TLs), the signer's certificate in KeyInfo. The
TSA's key is RSA: pyHanko's DummyTimeStamper, which sign.py uses for fixed-time timestamps, signs
only with RSA.

Lists written:
  lotl.xml              the list of the lists, signed by lotl-signer, pointing to the two TLs
                        (BE and LU, each naming tl-signer as its signer)
  tl-qc.xml             BE: three CA/QC services: "TL Test Qualified CA" granted since 2020,
                        "TL Test Withdrawn Qualified CA", granted 2020-01-01, withdrawn 2024-06-01
                        (the grant in its service history), and "TL Test Qualified CA With
                        Qualifiers", whose QCWithQSCD qualifier covers certificates with nonRepudiation
  tl-qtst.xml           LU: one QTST service, the test TSA, granted since 2020
  tl-qc-tampered.xml    tl-qc.xml with one byte of a service name changed after signing
  tl-qc-other-key.xml   tl-qc.xml signed by other-signer, a key no list names
  tl-qc-expired.xml     tl-qc.xml with a NextUpdate in the past (2021), properly signed
  tl-qc-wrong-namespace.xml  tl-qc.xml in a namespace that is not TS 119 612's, properly signed
  tl-xx-unlisted.xml    a TL of territory XX, properly signed by tl-signer, to which the LOTL does not point
The certificates are fixed by pki.yml and the keys; ECDSA signatures differ from run to run.
"""

import base64
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace

import pyhanko.sign.ades.qualified_asn1  # noqa: F401 (registers the qc_statements extension)
from certomancer.registry import CertomancerConfig
from lxml import etree

HERE = os.path.dirname(os.path.abspath(__file__))
TSL = "http://uri.etsi.org/02231/v2#"
TSLX = "http://uri.etsi.org/02231/v2/additionaltypes#"
DS = "http://www.w3.org/2000/09/xmldsig#"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
URI_BASE = "http://uri.etsi.org/TrstSvc/TrustedList"
CA_QC = "http://uri.etsi.org/TrstSvc/Svctype/CA/QC"
QTST = "http://uri.etsi.org/TrstSvc/Svctype/TSA/QTST"
GRANTED = f"{URI_BASE}/Svcstatus/granted"
WITHDRAWN = f"{URI_BASE}/Svcstatus/withdrawn"
FOR_ESIGNATURES = f"{URI_BASE}/SvcInfoExt/ForeSignatures"
ECC = "http://uri.etsi.org/TrstSvc/SvcInfoExt/eSigDir-1999-93-EC-TrustedList/#"
QC_WITH_QSCD = f"{URI_BASE}/SvcInfoExt/QCWithQSCD"
MIME_TSL = "application/vnd.etsi.tsl+xml"
ISSUED = "2026-01-01T00:00:00Z"
NEXT_UPDATE = "2036-01-01T00:00:00Z"
SINCE_2020 = "2020-01-01T00:00:00Z"


@dataclass(frozen=True)
class Scheme:
    """A scheme as its own list and the lists pointing to it name it; `signer` signs its list."""

    territory: str
    operator: str
    list_type: str
    signer: str


LOTL = Scheme("EU", "Test List Of The Lists Operator", f"{URI_BASE}/TSLType/EUlistofthelists", "lotl-signer")


def tl_scheme(territory):
    """The scheme of a member state's TL, signed by tl-signer."""
    return Scheme(territory, f"Test {territory} Scheme Operator", f"{URI_BASE}/TSLType/EUgeneric", "tl-signer")


@dataclass(frozen=True)
class Service:
    """A TSPService: its type, name, certificate (a name in pki.yml), status since a time, the
    (status, since) pairs of its history, its additional-information URIs and a qualifier."""

    service_type: str
    name: str
    cert: str
    status: str
    since: str
    history: tuple = ()
    extensions: tuple = ()
    qualifier: str | None = None


QC_SERVICES = (
    Service(CA_QC, "TL Test Qualified CA", "qc-ca", GRANTED, SINCE_2020, extensions=(FOR_ESIGNATURES,)),
    Service(
        CA_QC,
        "TL Test Withdrawn Qualified CA",
        "qc-ca-old",
        WITHDRAWN,
        "2024-06-01T00:00:00Z",
        history=((GRANTED, SINCE_2020),),
        extensions=(FOR_ESIGNATURES,),
    ),
    Service(
        CA_QC,
        "TL Test Qualified CA With Qualifiers",
        "qc-ca-q",
        GRANTED,
        SINCE_2020,
        extensions=(FOR_ESIGNATURES,),
        qualifier=QC_WITH_QSCD,
    ),
)
QTST_SERVICES = (Service(QTST, "TL Test Qualified Time Stamping Service", "tsa", GRANTED, SINCE_2020),)


def el(parent, name, text=None, ns=TSL, **attributes):
    node = etree.SubElement(parent, f"{{{ns}}}{name}", **attributes)
    if text is not None:
        node.text = text
    return node


def names(parent, tag, text):
    holder = el(parent, tag)
    el(holder, "Name", text, **{XML_LANG: "en"})


def uris(parent, tag, *values):
    holder = el(parent, tag)
    for value in values:
        el(holder, "URI", value, **{XML_LANG: "en"})


def der(cert):
    return base64.b64encode(cert.dump()).decode()


def digital_identity(parent, tag, cert):
    identity = el(parent, tag)
    el(el(identity, "DigitalId"), "X509Certificate", der(cert))


def address(parent, tag, *, street, territory, email):
    holder = el(parent, tag)
    postal = el(el(holder, "PostalAddresses"), "PostalAddress", **{XML_LANG: "en"})
    el(postal, "StreetAddress", street)
    el(postal, "Locality", "Test City")
    el(postal, "CountryName", territory)
    uris(holder, "ElectronicAddress", email)


def scheme_information(root, scheme, *, rules):
    territory = scheme.territory
    info = el(root, "SchemeInformation")
    el(info, "TSLVersionIdentifier", "5")
    el(info, "TSLSequenceNumber", "1")
    el(info, "TSLType", scheme.list_type)
    names(info, "SchemeOperatorName", scheme.operator)
    address(
        info, "SchemeOperatorAddress", street="Test Street 1", territory=territory, email="mailto:operator@tl.example"
    )
    names(info, "SchemeName", f"{territory}: trusted list (test)")
    uris(info, "SchemeInformationURI", f"https://tl.example/{territory}/info.html")
    el(info, "StatusDeterminationApproach", f"{URI_BASE}/StatusDetn/EUappropriate")
    uris(info, "SchemeTypeCommunityRules", *rules)
    el(info, "SchemeTerritory", territory)
    holder = el(info, "PolicyOrLegalNotice")
    el(holder, "TSLLegalNotice", "Test data: not a real trusted list.", **{XML_LANG: "en"})
    el(info, "HistoricalInformationPeriod", "65535")
    return info


def finish_scheme_information(info, *, issued, next_update):
    el(info, "ListIssueDateTime", issued)
    el(el(info, "NextUpdate"), "dateTime", next_update)


def pointer(holder, arch, scheme, *, location):
    tsl_pointer = el(holder, "OtherTSLPointer")
    identities = el(tsl_pointer, "ServiceDigitalIdentities")
    digital_identity(identities, "ServiceDigitalIdentity", arch.get_cert(scheme.signer))
    el(tsl_pointer, "TSLLocation", location)
    additional = el(tsl_pointer, "AdditionalInformation")
    for tag, value, ns in (
        ("TSLType", scheme.list_type, TSL),
        ("SchemeTerritory", scheme.territory, TSL),
        ("MimeType", MIME_TSL, TSLX),
    ):
        el(el(additional, "OtherInformation"), tag, value, ns=ns)
    other = el(additional, "OtherInformation")
    names(other, "SchemeOperatorName", scheme.operator)
    other = el(additional, "OtherInformation")
    uris(other, "SchemeTypeCommunityRules", f"{URI_BASE}/schemerules/EUcommon")


def qualifications(holder, qualifier, key_usage_bit):
    """A critical Qualifications extension: `qualifier` for the certificates with `key_usage_bit` set."""
    extension = el(holder, "Extension", Critical="true")
    element = el(el(extension, "Qualifications", ns=ECC), "QualificationElement", ns=ECC)
    el(el(element, "Qualifiers", ns=ECC), "Qualifier", ns=ECC, uri=qualifier)
    criteria = el(element, "CriteriaList", ns=ECC, **{"assert": "atLeastOne"})
    bit = el(el(criteria, "KeyUsage", ns=ECC), "KeyUsageBit", "true", ns=ECC)
    bit.attrib["name"] = key_usage_bit


def service_fields(parent, arch, service):
    el(parent, "ServiceTypeIdentifier", service.service_type)
    names(parent, "ServiceName", service.name)
    digital_identity(parent, "ServiceDigitalIdentity", arch.get_cert(service.cert))
    el(parent, "ServiceStatus", service.status)
    el(parent, "StatusStartingTime", service.since)
    if service.extensions or service.qualifier:
        holder = el(parent, "ServiceInformationExtensions")
        for uri in service.extensions:
            extension = el(holder, "Extension", Critical="false")
            uris(extension, "AdditionalServiceInformation", uri)
        if service.qualifier:
            qualifications(holder, service.qualifier, "nonRepudiation")


def add_service(services, arch, service):
    """The service, with its history instances (each without the qualifier)."""
    tsp_service = el(services, "TSPService")
    service_fields(el(tsp_service, "ServiceInformation"), arch, service)
    if service.history:
        holder = el(tsp_service, "ServiceHistory")
        for past_status, past_since in service.history:
            past = replace(service, status=past_status, since=past_since, qualifier=None)
            service_fields(el(holder, "ServiceHistoryInstance"), arch, past)


def provider(root, name, territory):
    providers = root.find(f"{{{TSL}}}TrustServiceProviderList")
    if providers is None:
        providers = el(root, "TrustServiceProviderList")
    tsp = el(providers, "TrustServiceProvider")
    information = el(tsp, "TSPInformation")
    names(information, "TSPName", name)
    address(information, "TSPAddress", street="Test Street 2", territory=territory, email="mailto:tsp@tsp.example")
    uris(information, "TSPInformationURI", f"https://tsp.example/{territory}")
    return el(tsp, "TSPServices")


def new_list(namespace=TSL):
    return etree.Element(
        f"{{{namespace}}}TrustServiceStatusList",
        nsmap={"tsl": namespace, "tslx": TSLX, "ds": DS},
        TSLTag="http://uri.etsi.org/19612/TSLTag",
        Id="TrustServiceStatusList",
    )


def signature_template(root, algorithm):
    """An empty ds:Signature that xmlsec1 fills in: enveloped, exclusive C14N, SHA-256."""
    signature = el(root, "Signature", ns=DS, Id="signature")
    info = el(signature, "SignedInfo", ns=DS)
    el(info, "CanonicalizationMethod", ns=DS, Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#")
    el(info, "SignatureMethod", ns=DS, Algorithm=algorithm)
    reference = el(info, "Reference", ns=DS, URI="")
    transforms = el(reference, "Transforms", ns=DS)
    el(transforms, "Transform", ns=DS, Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature")
    el(transforms, "Transform", ns=DS, Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#")
    el(reference, "DigestMethod", ns=DS, Algorithm="http://www.w3.org/2001/04/xmlenc#sha256")
    el(reference, "DigestValue", "", ns=DS)
    el(signature, "SignatureValue", "", ns=DS)
    el(el(el(signature, "KeyInfo", ns=DS), "X509Data", ns=DS), "X509Certificate", ns=DS)


ALGORITHMS = {
    "lotl-signer": "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
    "tl-signer": "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256",
    "other-signer": "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256",
}


def sign(root, signer, output):
    signature_template(root, ALGORITHMS[signer])
    with tempfile.NamedTemporaryFile(suffix=".xml", delete=False) as template:
        template.write(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))
    key = os.path.join(HERE, "keys", f"{signer}.key.pem")
    cert = os.path.join(HERE, "certs", f"{signer}.cert.pem")
    subprocess.run(
        ["xmlsec1", "--sign", "--privkey-pem", f"{key},{cert}", "--output", os.path.join(HERE, output), template.name],
        check=True,
    )
    os.unlink(template.name)


def lotl(arch, base="https://tl.example"):
    root = new_list()
    info = scheme_information(root, LOTL, rules=[f"{URI_BASE}/schemerules/EUlistofthelists"])
    pointers = el(info, "PointersToOtherTSL")
    for territory, file in (("BE", "tl-qc.xml"), ("LU", "tl-qtst.xml")):
        pointer(pointers, arch, tl_scheme(territory), location=f"{base}/{territory}/{file}")
    finish_scheme_information(info, issued=ISSUED, next_update=NEXT_UPDATE)
    return root


def trusted_list(arch, territory, provider_name, services, *, namespace=TSL, next_update=NEXT_UPDATE):
    """A member state's TL: its scheme pointing back to the LOTL, one provider with `services`."""
    root = new_list(namespace)
    rules = [f"{URI_BASE}/schemerules/EUcommon", f"{URI_BASE}/schemerules/{territory}"]
    info = scheme_information(root, tl_scheme(territory), rules=rules)
    pointer(el(info, "PointersToOtherTSL"), arch, LOTL, location="https://tl.example/EU/lotl.xml")
    finish_scheme_information(info, issued=ISSUED, next_update=next_update)
    tsp_services = provider(root, provider_name, territory)
    for service in services:
        add_service(tsp_services, arch, service)
    return root


def tl_qc(arch, *, namespace=TSL, next_update=NEXT_UPDATE):
    return trusted_list(
        arch, "BE", "Test Qualified Trust Service Provider", QC_SERVICES, namespace=namespace, next_update=next_update
    )


def tl_qtst(arch, territory="LU"):
    return trusted_list(arch, territory, "Test Qualified Time Stamping Provider", QTST_SERVICES)


def tamper(source, output):
    with open(os.path.join(HERE, source), "rb") as f:
        data = f.read()
    changed = data.replace(b"TL Test Qualified CA<", b"TL Test Qualified CB<", 1)
    assert changed != data
    with open(os.path.join(HERE, output), "wb") as f:
        f.write(changed)


def main():
    config = CertomancerConfig.from_file(os.path.join(HERE, "pki.yml"), key_search_dir=HERE)
    arch = config.get_pki_arch("tl")
    arch.dump_certs(os.path.join(HERE, "certs"), flat=True)
    sign(lotl(arch), "lotl-signer", "lotl.xml")
    sign(tl_qc(arch), "tl-signer", "tl-qc.xml")
    sign(tl_qtst(arch), "tl-signer", "tl-qtst.xml")
    tamper("tl-qc.xml", "tl-qc-tampered.xml")
    sign(tl_qc(arch), "other-signer", "tl-qc-other-key.xml")
    sign(tl_qc(arch, next_update="2021-01-01T00:00:00Z"), "tl-signer", "tl-qc-expired.xml")
    wrong = "http://uri.etsi.org/02231/v1#"
    sign(tl_qc(arch, namespace=wrong), "tl-signer", "tl-qc-wrong-namespace.xml")
    sign(tl_qtst(arch, territory="XX"), "tl-signer", "tl-xx-unlisted.xml")
    return 0


if __name__ == "__main__":
    sys.exit(main())
