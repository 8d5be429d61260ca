"""Throwaway TLS material: a CA, and a broker certificate it signs, made with openssl.

Clients verify the broker against ``ca.pem`` (contract option ``--ca``); the broker reads
``broker.p12`` (PKCS#12, the key and its chain). Nothing here outlives the point's work
directory, and the private keys never leave it.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from burstbench.infra import secret


class TlsError(RuntimeError):
    pass


@dataclass
class Material:
    dir: Path
    ca_pem: Path
    keystore: Path  # PKCS#12 with the broker key and certificate chain
    truststore: Path  # PKCS#12 trusting the CA: brokers verify each other on network links
    password: str
    # a client certificate the CA signed, and its unencrypted PKCS#8 key (mutual TLS)
    client_cert: Path | None = None
    client_key: Path | None = None


def _openssl(*args: str, cwd: Path) -> None:
    r = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                       check=False)
    if r.returncode != 0:
        raise TlsError(f"openssl {args[0]} failed: {r.stderr.strip().splitlines()[-1:]}")


def make(workdir: Path, hosts: list[str], client: bool = False) -> Material:
    """A CA and a broker certificate valid for ``hosts`` (IP addresses or names); with
    ``client``, a client certificate too (``client.pem``, ``client.key``)."""
    for tool in ("openssl", "keytool"):
        if shutil.which(tool) is None:
            raise TlsError(f"--tls needs {tool} (openssl; keytool comes with the JDK)")
    d = Path(workdir) / "tls"
    d.mkdir(parents=True, exist_ok=True)
    password = secret.throwaway(18)
    sans = ",".join(("IP:" if h.replace(".", "").isdigit() else "DNS:") + h
                    for h in dict.fromkeys([*hosts, "localhost"]))
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
             "ca.pem", "-days", "2", "-subj", "/CN=burstbench throwaway CA",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d)
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "broker.key", "-out",
             "broker.csr", "-subj", "/CN=burstbench broker", cwd=d)
    (d / "ext.cnf").write_text(f"subjectAltName={sans}\nextendedKeyUsage=serverAuth\n"
                               "basicConstraints=CA:FALSE\n")
    _openssl("x509", "-req", "-in", "broker.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", "broker.pem", "-days", "2", "-extfile", "ext.cnf",
             cwd=d)
    _openssl("pkcs12", "-export", "-in", "broker.pem", "-inkey", "broker.key", "-certfile",
             "ca.pem", "-name", "broker", "-out", "broker.p12", "-passout",
             f"pass:{password}", cwd=d)
    if client:
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "client.key", "-out",
                 "client.csr", "-subj", "/CN=burstbench client", cwd=d)
        (d / "client.cnf").write_text("extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n")
        _openssl("x509", "-req", "-in", "client.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                 "-CAcreateserial", "-out", "client.pem", "-days", "2", "-extfile",
                 "client.cnf", cwd=d)
    for f in ("ca.key", "broker.key", "broker.csr", "ext.cnf", "client.csr", "client.cnf"):
        (d / f).unlink(missing_ok=True)
    # Java only trusts PKCS#12 certificate entries that keytool marked as trusted
    r = subprocess.run(["keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", "ca.pem",
                        "-keystore", "trust.p12", "-storetype", "pkcs12", "-storepass",
                        password], cwd=d, capture_output=True, text=True, timeout=60, check=False)
    if r.returncode != 0:
        raise TlsError(f"keytool -importcert failed: {r.stderr.strip()[-300:]}")
    return Material(dir=d, ca_pem=d / "ca.pem", keystore=d / "broker.p12",
                    truststore=d / "trust.p12", password=password,
                    client_cert=d / "client.pem" if client else None,
                    client_key=d / "client.key" if client else None)
