"""deploy/kubernetes: validated offline against the Kubernetes schemas (kubernetes-validate
carries them; no cluster here, see docs/kubernetes.md), and consistent with the rest of the
deployment: the brokers' files, the images, the ports, the bench's command, no secret."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from urllib.parse import urlsplit

import kubernetes_validate
import pytest
import yaml
from conftest import ROOT
from test_compose import SCHEME_PROTOCOL, connector_ports, services

from burstbench import cli, clients
from burstbench.infra import kube, outside

K8S = ROOT / "deploy" / "kubernetes"
VERSION = "1.33.0"  # the Kubernetes release the manifests are checked against


def manifests() -> list[tuple[str, dict]]:
    """Every object: the kustomization's files and the results reader (fetch/)."""
    out = []
    for f in sorted(K8S.glob("*.yaml")) + sorted((K8S / "fetch").glob("*.yaml")):
        if f.name == "kustomization.yaml":
            continue
        out += [(f.name, d) for d in yaml.safe_load_all(f.read_text()) if d]
    return out


def by_kind(kind: str) -> dict[str, dict]:
    return {d["metadata"]["name"]: d for _, d in manifests() if d["kind"] == kind}


def pod_specs() -> dict[str, dict]:
    out = dict(by_kind("Pod"))
    for kind in ("StatefulSet", "Deployment", "Job"):
        for name, d in by_kind(kind).items():
            out[name] = d["spec"]["template"]
    return out


@pytest.mark.parametrize("name, doc", manifests(),
                         ids=[f"{f}:{d['kind']}/{d['metadata']['name']}" for f, d in manifests()])
def test_every_manifest_is_valid_against_the_kubernetes_schemas(name, doc):
    kubernetes_validate.validate(doc, VERSION, strict=True)


def test_the_validator_rejects_an_unknown_field_and_a_wrong_type():
    sts = copy.deepcopy(by_kind("StatefulSet")["broker-a"])
    sts["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(sts, VERSION, strict=True)
    svc = copy.deepcopy(by_kind("Service")["broker-b"])
    svc["spec"]["ports"][0]["port"] = "sixty-one thousand"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(svc, VERSION, strict=True)


def test_the_kustomization_lists_every_manifest_file():
    k = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    files = {f.name for f in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert sorted(k["resources"]) == sorted(files)
    assert k["namespace"] == by_kind("Namespace")["burstbench"]["metadata"]["name"]


def test_the_broker_config_map_is_a_fresh_render_of_the_compose_files():
    assert (K8S / "broker-config.yaml").read_text() == kube.render(), \
        "deploy/kubernetes/broker-config.yaml is stale: run python -m burstbench.infra.kube"
    data = by_kind("ConfigMap")["burstbench-broker-config"]["data"]
    for b in kube.BROKERS:
        assert data[f"{b}.xml"] == (ROOT / "deploy" / f"{b}.xml").read_text()


def test_brokers_are_stateful_sets_with_a_volume_for_their_store_and_their_own_file():
    sets = by_kind("StatefulSet")
    for b in kube.BROKERS:
        sts = sets[b]
        claims = {c["metadata"]["name"] for c in sts["spec"]["volumeClaimTemplates"]}
        [c] = sts["spec"]["template"]["spec"]["containers"]
        mounts = {m["name"]: m for m in c["volumeMounts"]}
        assert "data" in claims and mounts["data"]["mountPath"] == "/opt/burstbench/data"
        assert mounts["config"]["subPath"] == f"{b}.xml"
        assert c["args"] == ["/etc/burstbench/activemq.xml"] == services()[b]["command"]
        ports = {p["name"]: p["containerPort"] for p in c["ports"]}
        assert ports == connector_ports(ROOT / "deploy" / f"{b}.xml")
        assert sts["spec"]["serviceName"] == b


def test_every_service_selects_a_workload_and_targets_its_ports():
    pods = pod_specs()
    for name, svc in by_kind("Service").items():
        sel = svc["spec"]["selector"]
        matching = [p for p in pods.values()
                    if sel.items() <= p["metadata"]["labels"].items()]
        assert matching, f"Service {name} selects no pod"
        declared = {p["containerPort"] for pod in matching for c in pod["spec"]["containers"]
                    for p in c.get("ports", [])}
        for port in svc["spec"].get("ports", []):
            assert port["targetPort"] in declared, (name, port)


def compose_builds() -> set[str]:
    """The images docker compose builds, for each value of its build variables."""
    built = set()
    for s in (s for s in services().values() if "build" in s):
        for rt in clients.BRIDGE_MODULES:
            built.add(re.sub(r"\$\{BRIDGE_RUNTIME:-\w+\}", rt, s["image"]))
    return built


def test_images_are_the_compose_builds_or_pinned_to_an_exact_version():
    built = compose_builds()
    for name, pod in pod_specs().items():
        for c in pod["spec"]["containers"] + pod["spec"].get("initContainers", []):
            image = c["image"]
            assert image in built or re.fullmatch(r"[\w./-]+:\d+(\.\d+)+[\w.-]*", image), \
                f"{name}: {image} is neither a compose build nor pinned"


def test_the_pekko_overlay_is_the_whole_deployment_with_the_bridge_on_pekko():
    """deploy/kubernetes/pekko: the base's resources, the bridge's image swapped for the
    build of the same bridge on Pekko (kustomize's image transformer, offline: no kubectl)."""
    overlay = yaml.safe_load((K8S / "pekko" / "kustomization.yaml").read_text())
    assert overlay["resources"] == [".."]
    (swap,) = overlay["images"]
    images = {c["image"] for pod in pod_specs().values() for c in pod["spec"]["containers"]}
    base = {i.partition(":")[0] for i in images}
    assert swap["name"] in base and swap["name"].endswith("-akka")
    assert f"{swap['newName']}:0.1.0" in compose_builds()
    assert swap["newName"] == swap["name"].removesuffix("-akka") + "-pekko"


def test_no_credential_is_in_any_manifest():
    """PostgreSQL's credentials are a Secret made at install time (docs/kubernetes.md)."""
    assert "Secret" not in {d["kind"] for _, d in manifests()}
    for name, pod in pod_specs().items():
        for c in pod["spec"]["containers"]:
            for e in c.get("env", []):
                assert not re.search(r"PASSWORD$|USER$|_DB$", e["name"]) or "value" not in e \
                    or e["name"].endswith("_FILE"), f"{name}: {e['name']} set in the manifest"
    secret_users = {n for n, p in pod_specs().items() for v in p["spec"].get("volumes", [])
                    if v.get("secret", {}).get("secretName") == "burstbench-postgres"}
    assert secret_users == {"postgres", "broker-b"}
    doc = (ROOT / "docs" / "kubernetes.md").read_text()
    assert "create secret generic burstbench-postgres" in doc


def test_the_bench_job_parses_with_the_harness_parser_and_names_the_broker_services(capsys):
    [c] = by_kind("Job")["bench"]["spec"]["template"]["spec"]["containers"]
    argv = c["args"]
    assert argv[0] == "./bench"
    try:
        args = cli.build_parser().parse_args(argv[1:])
    except SystemExit as e:
        pytest.fail(f"burstbench.cli rejects {argv[1:]} (exit {e.code}): {capsys.readouterr().err}")
    svcs = by_kind("Service")
    for text, b in zip(args.broker_url, kube.BROKERS, strict=True):
        outside.parse_external(b, text)
        ports = {p["name"]: p["port"] for p in svcs[b]["spec"]["ports"]}
        for url in text.split(","):
            u = urlsplit(url)
            assert u.hostname == b and u.port == ports[SCHEME_PROTOCOL[u.scheme]], url


def test_load_generators_are_named_pods_of_the_bench_image_an_inventory_can_place(tmp_path):
    from burstbench.infra import inventory
    sts = by_kind("StatefulSet")["loadgen"]
    [c] = sts["spec"]["template"]["spec"]["containers"]
    assert c["image"] == services()["bench"]["image"] and c["name"] == "bench"
    example = yaml.safe_load("\n".join(
        line.removeprefix("#   ").removeprefix("# ") for line in
        (K8S / "loadgen.yaml").read_text().splitlines() if line.startswith("#   ")))
    p = Path(tmp_path) / "hosts.yaml"
    p.write_text(yaml.safe_dump(example))
    inv = inventory.load(p, need=("producers", "consumers"))
    pods = {h.kubectl["pod"] for h in inv.hosts}
    assert pods == {f"loadgen-{i}" for i in range(sts["spec"]["replicas"])}
    assert {h.kubectl["namespace"] for h in inv.hosts} == {"burstbench"}


def _job_container():
    [c] = by_kind("Job")["bench"]["spec"]["template"]["spec"]["containers"]
    return c


def _wait_for_brokers():
    [init] = by_kind("Job")["bench"]["spec"]["template"]["spec"]["initContainers"]
    env = {e["name"]: e["value"] for e in init["env"]}
    return init, env


def test_the_bench_job_waits_for_every_connector_its_broker_urls_name():
    """The Job's init container waits for exactly the connectors the sweep will use, and the
    brokers report ready only when all three of theirs accept (as compose's healthcheck)."""
    init, env = _wait_for_brokers()
    assert init["image"] == _job_container()["image"]
    argv = _job_container()["args"]
    urls = [argv[i + 1] for i, a in enumerate(argv) if a == "--broker-url"]
    named = [f"{urlsplit(u).hostname}:{urlsplit(u).port}" for text in urls
             for u in text.split(",")]
    assert env["BROKERS"].split() == named
    for b in kube.BROKERS:
        [c] = by_kind("StatefulSet")[b]["spec"]["template"]["spec"]["containers"]
        probe = " ".join(c["readinessProbe"]["exec"]["command"])
        for port in connector_ports(ROOT / "deploy" / f"{b}.xml").values():
            assert f"/dev/tcp/127.0.0.1/{port}" in probe, (b, port)


@pytest.fixture
def listening():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def test_the_wait_script_passes_on_open_ports_and_fails_naming_a_closed_one(listening):
    """The init container's own script, run by bash here against a real listener and a port
    nothing listens on (the deadline shortened through its environment variable)."""
    import socket
    import subprocess
    init, env = _wait_for_brokers()
    script = init["args"][0]
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens on it
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    ok = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60,
                        check=False, env={"BROKERS": f"127.0.0.1:{listening}", "WAIT_SECONDS": "30",
                             "PATH": "/usr/bin:/bin"})
    assert ok.returncode == 0, ok.stderr
    assert f"127.0.0.1:{listening} accepts connections" in ok.stdout
    bad = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60,
                         check=False, env={"BROKERS": f"127.0.0.1:{listening} 127.0.0.1:{closed}",
                              "WAIT_SECONDS": "3", "PATH": "/usr/bin:/bin"})
    assert bad.returncode == 1
    assert f"127.0.0.1:{closed} takes no connection after 3 s" in bad.stderr
    assert env["WAIT_SECONDS"].isdigit()


def test_results_leave_through_a_reader_of_the_jobs_volume_by_the_documented_commands():
    reader = by_kind("Pod")["results-reader"]
    job = by_kind("Job")["bench"]["spec"]["template"]["spec"]
    claim = {v["name"]: v["persistentVolumeClaim"]["claimName"] for v in job["volumes"]}
    [mount] = _job_container()["volumeMounts"]
    [vol] = reader["spec"]["volumes"]
    assert vol["persistentVolumeClaim"]["claimName"] == claim[mount["name"]]
    assert vol["persistentVolumeClaim"]["readOnly"] is True
    [c] = reader["spec"]["containers"]
    assert c["image"] == _job_container()["image"]  # kubectl cp needs the image's tar
    k = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert not any("fetch" in r for r in k["resources"])  # never holds the volume during a run
    doc = (ROOT / "docs" / "kubernetes.md").read_text()
    steps = [line.removeprefix("#   ") for line in
             (K8S / "fetch" / "results-reader.yaml").read_text().splitlines()
             if line.startswith("#   kubectl")]
    assert len(steps) == 5
    for step in steps:
        assert step in doc, f"docs/kubernetes.md lacks: {step}"
