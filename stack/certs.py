"""Certificates and keys for the local Kubernetes control plane.

One CA signs the apiserver's serving certificate and the client certificates of
the admin (group ``system:masters``) and the controller-manager (the user RBAC's
bootstrap policy already binds). A separate RSA key signs ServiceAccount tokens,
so the TokenRequest API and in-cluster authentication are the real thing.

A second CA, the front proxy's, signs only the client certificate the aggregation
layer presents to extension API servers (``front-proxy-client``). It must not be the
cluster CA: an extension server trusts ``X-Remote-User`` from anything that CA signed,
so a user's client certificate must never pass as the front proxy.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_VALIDITY = dt.timedelta(days=30)
FRONT_PROXY_CLIENT = "front-proxy-client"  # --requestheader-allowed-names


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)


def _name(cn: str, org: str | None = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    if org:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    return x509.Name(attrs)


@dataclass(frozen=True)
class KeyPair:
    cert: Path
    key: Path


@dataclass(frozen=True)
class ClusterPki:
    ca: KeyPair
    apiserver: KeyPair
    admin: KeyPair
    controller_manager: KeyPair
    service_account_key: Path
    service_account_pub: Path
    front_proxy_ca: KeyPair  # --requestheader-client-ca-file: trusted for X-Remote-User
    front_proxy_client: KeyPair  # what the aggregator presents (CN front-proxy-client)


class _Issuer:
    def __init__(self, directory: Path, name: str = "segue-local-ca", stem: str = "ca") -> None:
        self.dir, self.stem = directory, stem
        self.now = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
        self.ca_key = ec.generate_private_key(ec.SECP256R1())
        self.ca_cert = (
            x509.CertificateBuilder()
            .subject_name(_name(name))
            .issuer_name(_name(name))
            .public_key(self.ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(self.now)
            .not_valid_after(self.now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(self.ca_key, hashes.SHA256())
        )

    def save_ca(self) -> KeyPair:
        pair = KeyPair(self.dir / f"{self.stem}.crt", self.dir / f"{self.stem}.key")
        pair.cert.write_bytes(self.ca_cert.public_bytes(serialization.Encoding.PEM))
        _write_key(pair.key, self.ca_key)
        return pair

    def issue(
        self,
        stem: str,
        cn: str,
        org: str | None = None,
        *,
        server: bool = False,
        dns: tuple[str, ...] = (),
        ips: tuple[str, ...] = (),
    ) -> KeyPair:
        key = ec.generate_private_key(ec.SECP256R1())
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(cn, org))
            .issuer_name(self.ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(self.now)
            .not_valid_after(self.now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if dns or ips:
            sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
            sans += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        cert = builder.sign(self.ca_key, hashes.SHA256())
        pair = KeyPair(self.dir / f"{stem}.crt", self.dir / f"{stem}.key")
        pair.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_key(pair.key, key)
        return pair


def create_pki(directory: Path, service_ip: str = "10.96.0.1") -> ClusterPki:
    """Write a fresh PKI for one local cluster into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    issuer = _Issuer(directory)
    ca = issuer.save_ca()
    apiserver = issuer.issue(
        "apiserver",
        "kube-apiserver",
        server=True,
        dns=(
            "localhost",
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local",
        ),
        ips=("127.0.0.1", service_ip),
    )
    admin = issuer.issue("admin", "segue-admin", "system:masters")
    kcm = issuer.issue("controller-manager", "system:kube-controller-manager")
    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    sa_key_path, sa_pub_path = directory / "sa.key", directory / "sa.pub"
    _write_key(sa_key_path, sa_key)
    sa_pub_path.write_bytes(
        sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    front = _Issuer(directory, "segue-front-proxy-ca", "front-proxy-ca")
    front_ca = front.save_ca()
    front_client = front.issue("front-proxy-client", FRONT_PROXY_CLIENT)
    return ClusterPki(ca, apiserver, admin, kcm, sa_key_path, sa_pub_path, front_ca, front_client)


def serving_pair(
    directory: Path, dns: tuple[str, ...], ips: tuple[str, ...] = ()
) -> tuple[KeyPair, KeyPair]:
    """``(ca, serving)``: a CA of its own and a serving certificate it signed for
    ``dns``/``ips``. What a test's extension API server needs: the APIService's
    ``caBundle`` is the CA, the server presents the other."""
    directory.mkdir(parents=True, exist_ok=True)
    issuer = _Issuer(directory, "segue-serving-ca", "serving-ca")
    ca = issuer.save_ca()
    return ca, issuer.issue("serving", dns[0] if dns else ips[0], server=True, dns=dns, ips=ips)
