"""Verifies bundles of the real OpenSSF `model_signing` tool with core/signing.

Keys and certificates are made here with `cryptography`, a model folder is signed with the
tool's CLI from this venv (key mode and certificate mode), and model_signature_check (its path
in MODELPLANE_SIGNATURE_CHECK_BINARY; ctest sets it) verifies ModelRevisions built from the
folder's files and the bundles, as the operator and the node agents do. The tool's own verifier
is asked too where it has an opinion, so both agree on what is valid.
"""

import base64
import datetime
import hashlib
import json
import os
import pathlib
import subprocess
import sys

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

MODEL_SIGNING = pathlib.Path(sys.executable).parent / "model_signing"
CREATED = "2026-06-01T00:00:00Z"  # the revisions' creationTimestamp
IDENTITY = "release@corp.test"
NAMESPACE = "team-a"

MODEL = {
    "config.json": b'{"hidden_size": 8}\n',
    "tokenizer.json": b'{"model": {"type": "BPE"}}\n',
    "weights/model.safetensors": bytes(range(256)),
}


def utc(year):
    return datetime.datetime(year, 1, 1, tzinfo=datetime.timezone.utc)


def write_private_key(path, key):
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


def public_pem(key):
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def certificate(subject, key, issuer, issuer_key, *, ca, years):
    name = lambda text: x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])  # noqa: E731
    builder = (
        x509.CertificateBuilder()
        .subject_name(name(subject))
        .issuer_name(name(issuer))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(utc(years[0]))
        .not_valid_after(utc(years[1]))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=not ca,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=ca,
                crl_sign=ca,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
    )
    if not ca:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.RFC822Name(IDENTITY)]), critical=False
        )
    return builder.sign(issuer_key, hashes.SHA256())


def write_model(folder, files):
    for path, content in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(content)


def sign(folder, bundle, *arguments):
    subprocess.run(
        [str(MODEL_SIGNING), "sign", *arguments, "--signature", str(bundle), str(folder)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return bundle.read_text(encoding="utf-8")


def spec_files(files):
    return [
        {
            "path": path,
            "size": len(content),
            "sha256": "sha256:" + hashlib.sha256(content).hexdigest(),
            "role": "config",
        }
        for path, content in files.items()
    ]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Keys, certificates, a policy trusting some of them, and bundles the tool signed."""
    root = tmp_path_factory.mktemp("model-signing")
    model = root / "model"
    write_model(model, MODEL)
    other_files = dict(MODEL, **{"config.json": b'{"hidden_size": 16}\n'})
    other_model = root / "other-model"
    write_model(other_model, other_files)

    trusted_key = ec.generate_private_key(ec.SECP256R1())
    untrusted_key = ec.generate_private_key(ec.SECP256R1())
    ca_key = ec.generate_private_key(ec.SECP384R1())
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    for name, key in (("trusted", trusted_key), ("untrusted", untrusted_key), ("leaf", leaf_key)):
        write_private_key(root / f"{name}.key.pem", key)
    (root / "trusted.pub.pem").write_bytes(public_pem(trusted_key))
    ca = certificate("corp root", ca_key, "corp root", ca_key, ca=True, years=(2024, 2050))
    (root / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    for name, years in (("leaf", (2025, 2045)), ("expired", (2020, 2021))):
        leaf = certificate("release", leaf_key, "corp root", ca_key, ca=False, years=years)
        (root / f"{name}.pem").write_bytes(leaf.public_bytes(serialization.Encoding.PEM))

    key_mode = ["key", "--private_key"]
    certificate_mode = ["certificate", "--private_key", str(root / "leaf.key.pem"),
                        "--certificate_chain", str(root / "ca.pem"), "--signing_certificate"]
    bundles = {
        "key": sign(model, root / "key.sig", *key_mode, str(root / "trusted.key.pem")),
        "untrusted": sign(model, root / "untrusted.sig", *key_mode,
                          str(root / "untrusted.key.pem")),
        "other-files": sign(other_model, root / "other.sig", *key_mode,
                            str(root / "trusted.key.pem")),
        "certificate": sign(model, root / "certificate.sig", *certificate_mode,
                            str(root / "leaf.pem")),
        "expired": sign(model, root / "expired.sig", *certificate_mode,
                        str(root / "expired.pem")),
    }

    def block(pem):
        return "".join("      " + line + "\n" for line in pem.decode().splitlines())

    policy = root / "policy.yaml"
    policy.write_text(
        f"required: [{NAMESPACE}]\n"
        "signers:\n"
        "  - name: release-key\n"
        "    publicKey: |\n" + block(public_pem(trusted_key)) +
        "  - name: corp-release\n"
        "    certificateAuthorities: |\n" + block(ca.public_bytes(serialization.Encoding.PEM)) +
        f"    identities: [{IDENTITY}]\n",
        encoding="utf-8",
    )
    return {"root": root, "model": model, "policy": policy, "bundles": bundles}


def check(world, bundles, files=MODEL):
    """model_signature_check's line for a revision of `files` carrying `bundles`."""
    binary = os.environ.get("MODELPLANE_SIGNATURE_CHECK_BINARY")
    if not binary:
        pytest.fail("MODELPLANE_SIGNATURE_CHECK_BINARY is not set; run this test through ctest")
    revision = {
        "apiVersion": "modelplane.io/v1alpha1",
        "kind": "ModelRevision",
        "metadata": {"name": "tiny-r1", "namespace": NAMESPACE, "creationTimestamp": CREATED},
        "spec": {
            "files": spec_files(files),
            "format": "safetensors",
            "engine": {"name": "vllm", "version": "0.6.3"},
            "sources": [{"name": "origin", "type": "http",
                         "http": {"baseURL": "https://models.example.com/tiny"}}],
            "signatures": [{"bundle": bundle} for bundle in bundles],
        },
    }
    path = world["root"] / "revision.json"
    path.write_text(json.dumps(revision), encoding="utf-8")
    result = subprocess.run(
        [binary, str(world["policy"]), NAMESPACE, str(path), CREATED],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode in (0, 1), result.stderr
    line = result.stdout.strip()
    assert (result.returncode == 0) == line.startswith("verified "), line
    return line


def tool_verifies(world, bundle_text, *mode):
    """Whether model_signing's own verifier accepts the bundle for the model folder."""
    bundle = world["root"] / "to-verify.sig"
    bundle.write_text(bundle_text, encoding="utf-8")
    result = subprocess.run(
        [str(MODEL_SIGNING), "verify", *mode, "--signature", str(bundle), str(world["model"])],
        capture_output=True, timeout=60,
    )
    return result.returncode == 0


def test_key_signature_verifies(world):
    assert check(world, [world["bundles"]["key"]]) == "verified release-key:"


def test_certificate_signature_verifies_with_its_identity(world):
    assert check(world, [world["bundles"]["certificate"]]) == f"verified corp-release:{IDENTITY}"


def test_both_signatures_verify_in_order(world):
    bundles = [world["bundles"]["certificate"], world["bundles"]["key"]]
    assert check(world, bundles) == f"verified corp-release:{IDENTITY} release-key:"


def test_tampered_statement_is_invalid(world):
    # The signed file list edited after signing, the spec changed to match it: only the
    # signature can tell.
    bundle = json.loads(world["bundles"]["key"])
    statement = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
    forged = dict(MODEL, **{"config.json": b'{"hidden_size": 9}\n'})
    digests = b""
    for resource in statement["predicate"]["resources"]:
        resource["digest"] = hashlib.sha256(forged[resource["name"]]).hexdigest()
        digests += bytes.fromhex(resource["digest"])
    statement["subject"][0]["digest"]["sha256"] = hashlib.sha256(digests).hexdigest()
    bundle["dsseEnvelope"]["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    tampered = json.dumps(bundle)
    assert check(world, [tampered], files=forged).startswith("refused SignatureInvalid: ")
    # model_signing's own verifier agrees.
    key = ["key", "--public_key", str(world["root"] / "trusted.pub.pem")]
    assert tool_verifies(world, world["bundles"]["key"], *key)
    assert not tool_verifies(world, tampered, *key)


def test_bundle_for_other_files_is_a_files_mismatch(world):
    line = check(world, [world["bundles"]["other-files"]])
    assert line.startswith("refused SignatureFilesMismatch: "), line
    assert '"config.json" has sha256:' in line


def test_wrong_key_is_untrusted(world):
    line = check(world, [world["bundles"]["untrusted"]])
    assert line.startswith("refused SignatureUntrusted: "), line
    hint = json.loads(world["bundles"]["untrusted"])["verificationMaterial"]["publicKey"]["hint"]
    assert hint in line


def test_expired_certificate_is_refused(world):
    line = check(world, [world["bundles"]["expired"]])
    assert line.startswith("refused SignatureCertificateExpired: "), line


def test_unsigned_revision_in_a_required_namespace_is_refused(world):
    assert check(world, []).startswith("refused SignatureRequired: ")
