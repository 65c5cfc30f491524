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


def scheme_information(root, *, list_type, territory, operator, rules):
    info = el(root, "SchemeInformation")
    el(info, "TSLVersionIdentifier", "5")
    el(info, "TSLSequenceNumber", "1")
    el(info, "TSLType", list_type)
    names(info, "SchemeOperatorName", operator)
    address = el(info, "SchemeOperatorAddress")
    postal = el(el(address, "PostalAddresses"), "PostalAddress", **{XML_LANG: "en"})
    el(postal, "StreetAddress", "Test Street 1")
    el(postal, "Locality", "Test City")
    el(postal, "CountryName", territory)
    uris(address, "ElectronicAddress", "mailto:operator@tl.example")
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


def pointer(holder, *, location, territory, signer, operator, list_type):
    tsl_pointer = el(holder, "OtherTSLPointer")
    identities = el(tsl_pointer, "ServiceDigitalIdentities")
    digital_identity(identities, "ServiceDigitalIdentity", signer)
    el(tsl_pointer, "TSLLocation", location)
    additional = el(tsl_pointer, "AdditionalInformation")
    for tag, value, ns in (
        ("TSLType", list_type, TSL),
        ("SchemeTerritory", territory, TSL),
        ("MimeType", MIME_TSL, TSLX),
    ):
        el(el(additional, "OtherInformation"), tag, value, ns=ns)
    other = el(additional, "OtherInformation")
    names(other, "SchemeOperatorName", operator)
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


def service_fields(parent, *, service_type, name, cert, status, since, extensions, qualifier=None):
    el(parent, "ServiceTypeIdentifier", service_type)
    names(parent, "ServiceName", name)
    digital_identity(parent, "ServiceDigitalIdentity", cert)
    el(parent, "ServiceStatus", status)
    el(parent, "StatusStartingTime", since)
    if extensions or qualifier:
        holder = el(parent, "ServiceInformationExtensions")
        for uri in extensions:
            extension = el(holder, "Extension", Critical="false")
            uris(extension, "AdditionalServiceInformation", uri)
        if qualifier:
            qualifications(holder, qualifier, "nonRepudiation")


def service(services, *, service_type, name, cert, status, since, history=(), extensions=(), qualifier=None):
    tsp_service = el(services, "TSPService")
    information = el(tsp_service, "ServiceInformation")
    service_fields(
        information,
        service_type=service_type,
        name=name,
        cert=cert,
        status=status,
        since=since,
        extensions=extensions,
        qualifier=qualifier,
    )
    if history:
        holder = el(tsp_service, "ServiceHistory")
        for past_status, past_since in history:
            service_fields(
                el(holder, "ServiceHistoryInstance"),
                service_type=service_type,
                name=name,
                cert=cert,
                status=past_status,
                since=past_since,
                extensions=extensions,
            )


def provider(root, name, territory):
    providers = root.find(f"{{{TSL}}}TrustServiceProviderList")
    if providers is None:
        providers = el(root, "TrustServiceProviderList")
    tsp = el(providers, "TrustServiceProvider")
    information = el(tsp, "TSPInformation")
    names(information, "TSPName", name)
    address = el(information, "TSPAddress")
    postal = el(el(address, "PostalAddresses"), "PostalAddress", **{XML_LANG: "en"})
    el(postal, "StreetAddress", "Test Street 2")
    el(postal, "Locality", "Test City")
    el(postal, "CountryName", territory)
    uris(address, "ElectronicAddress", "mailto:tsp@tsp.example")
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
    info = scheme_information(
        root,
        list_type=f"{URI_BASE}/TSLType/EUlistofthelists",
        territory="EU",
        operator="Test List Of The Lists Operator",
        rules=[f"{URI_BASE}/schemerules/EUlistofthelists"],
    )
    pointers = el(info, "PointersToOtherTSL")
    for territory, file in (("BE", "tl-qc.xml"), ("LU", "tl-qtst.xml")):
        pointer(
            pointers,
            location=f"{base}/{territory}/{file}",
            territory=territory,
            signer=arch.get_cert("tl-signer"),
            operator=f"Test {territory} Scheme Operator",
            list_type=f"{URI_BASE}/TSLType/EUgeneric",
        )
    finish_scheme_information(info, issued="2026-01-01T00:00:00Z", next_update="2036-01-01T00:00:00Z")
    return root


def tl_qc(arch, *, namespace=TSL, next_update="2036-01-01T00:00:00Z"):
    root = new_list(namespace)
    info = tl_scheme(arch, root, "BE")
    finish_scheme_information(info, issued="2026-01-01T00:00:00Z", next_update=next_update)
    services = provider(root, "Test Qualified Trust Service Provider", "BE")
    service(
        services,
        service_type=CA_QC,
        name="TL Test Qualified CA",
        cert=arch.get_cert("qc-ca"),
        status=GRANTED,
        since="2020-01-01T00:00:00Z",
        extensions=[FOR_ESIGNATURES],
    )
    service(
        services,
        service_type=CA_QC,
        name="TL Test Withdrawn Qualified CA",
        cert=arch.get_cert("qc-ca-old"),
        status=WITHDRAWN,
        since="2024-06-01T00:00:00Z",
        history=[(GRANTED, "2020-01-01T00:00:00Z")],
        extensions=[FOR_ESIGNATURES],
    )
    service(
        services,
        service_type=CA_QC,
        name="TL Test Qualified CA With Qualifiers",
        cert=arch.get_cert("qc-ca-q"),
        status=GRANTED,
        since="2020-01-01T00:00:00Z",
        extensions=[FOR_ESIGNATURES],
        qualifier=QC_WITH_QSCD,
    )
    return root


def tl_scheme(arch, root, territory):
    info = scheme_information(
        root,
        list_type=f"{URI_BASE}/TSLType/EUgeneric",
        territory=territory,
        operator=f"Test {territory} Scheme Operator",
        rules=[f"{URI_BASE}/schemerules/EUcommon", f"{URI_BASE}/schemerules/{territory}"],
    )
    pointers = el(info, "PointersToOtherTSL")
    pointer(
        pointers,
        location="https://tl.example/EU/lotl.xml",
        territory="EU",
        signer=arch.get_cert("lotl-signer"),
        operator="Test List Of The Lists Operator",
        list_type=f"{URI_BASE}/TSLType/EUlistofthelists",
    )
    return info


def tl_qtst(arch, territory="LU"):
    root = new_list()
    info = tl_scheme(arch, root, territory)
    finish_scheme_information(info, issued="2026-01-01T00:00:00Z", next_update="2036-01-01T00:00:00Z")
    services = provider(root, "Test Qualified Time Stamping Provider", territory)
    service(
        services,
        service_type=QTST,
        name="TL Test Qualified Time Stamping Service",
        cert=arch.get_cert("tsa"),
        status=GRANTED,
        since="2020-01-01T00:00:00Z",
    )
    return root


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
