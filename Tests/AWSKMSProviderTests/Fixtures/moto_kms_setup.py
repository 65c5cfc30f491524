"""Creates what the aws-kms tests sign with in a running moto_server, through boto3 (never through
the code under test), and prints it as one JSON object.

moto checks credentials only after INITIAL_NO_AUTH_ACTION_COUNT requests: the first SETUP_ACTIONS
requests below run unauthenticated, so the server must be started with that count; every request
after them (the public keys read here, then the provider's) must be signed with the IAM user's key
this script creates.

usage: moto_kms_setup.py ENDPOINT_URL
"""
import base64
import json
import sys

import boto3

SETUP_ACTIONS = 7
REGION = "us-east-1"
url = sys.argv[1]
bootstrap = dict(endpoint_url=url, region_name=REGION, aws_access_key_id="AKIABOOTSTRAP000000",
                 aws_secret_access_key="bootstrap")
iam = boto3.client("iam", **bootstrap)
kms = boto3.client("kms", **bootstrap)
iam.create_user(UserName="signer")                                               # 1
iam.put_user_policy(UserName="signer", PolicyName="kms",                         # 2
                    PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [
                        {"Effect": "Allow", "Action": "kms:*", "Resource": "*"}]}))
access = iam.create_access_key(UserName="signer")["AccessKey"]                   # 3
keys = {}
for name, spec, usage in [("p256", "ECC_NIST_P256", "SIGN_VERIFY"), ("rsa", "RSA_2048", "SIGN_VERIFY"),
                          ("encryption", "SYMMETRIC_DEFAULT", "ENCRYPT_DECRYPT")]:
    keys[name] = kms.create_key(KeySpec=spec, KeyUsage=usage)["KeyMetadata"]["Arn"]  # 4, 5, 6
kms.create_alias(AliasName="alias/document-signing", TargetKeyId=keys["p256"])    # 7

signer = boto3.client("kms", endpoint_url=url, region_name=REGION, aws_access_key_id=access["AccessKeyId"],
                      aws_secret_access_key=access["SecretAccessKey"])
public = {}
for name in ("p256", "rsa"):
    der = signer.get_public_key(KeyId=keys[name])["PublicKey"]
    public[name] = "-----BEGIN PUBLIC KEY-----\n" + base64.encodebytes(der).decode() + "-----END PUBLIC KEY-----\n"
print(json.dumps({"accessKeyID": access["AccessKeyId"], "secretAccessKey": access["SecretAccessKey"],
                  "region": REGION, "keys": keys, "alias": "alias/document-signing", "publicKeys": public}))
