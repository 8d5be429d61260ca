"""docker-compose.yml, the Dockerfiles and deploy/, checked on a machine without a Docker engine.

``docker-compose config`` (Debian's docker-compose) parses the compose file. The other tests
check what only ``docker compose up`` would otherwise find out: build contexts, Dockerfiles and
every file they copy, bind-mounted paths, each service's command (the bench's against the
harness's own parser, the brokers' against the launcher), ports that must agree between files,
the committed activemq.xml files against a fresh render, and the launcher's ``--check`` on them.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

import pytest
import yaml
from conftest import ROOT, need_broker_built

from burstbench import cli
from burstbench.infra import brokers, outside

COMPOSE = ROOT / "docker-compose.yml"
SERVICES = {"broker-a", "broker-b", "postgres", "bridge", "bench"}
BROKERS = ("broker-a", "broker-b")
SCHEME_PROTOCOL = {"tcp": "openwire", "stomp": "stomp", "ws": "ws"}
# bind-mount sources that are outputs: git-ignored, so absent in a fresh clone; docker creates them
OUTPUT_MOUNTS = {"results"}


def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def services() -> dict:
    return compose()["services"]


# -- Dockerfiles -------------------------------------------------------------------------------
def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    out, cur = [], ""
    for line in dockerfile.read_text().splitlines():
        if not cur and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1] + " "
            continue
        cur += line
        word, _, rest = cur.strip().partition(" ")
        out.append((word.upper(), rest.strip()))
        cur = ""
    return out


def words(args: str) -> list[str]:
    """The words of an instruction in exec (JSON) or shell form."""
    return json.loads(args) if args.startswith("[") else shlex.split(args)


def copies(dockerfile: Path) -> list[dict]:
    """Each COPY/ADD: {'from': stage or image or None, 'sources': [...], 'dest': ..., 'workdir'}."""
    out, workdir = [], "/"
    for ins, args in instructions(dockerfile):
        if ins == "FROM":
            workdir = "/"
        elif ins == "WORKDIR":
            workdir = str(PurePosixPath(workdir) / args)
        elif ins in ("COPY", "ADD"):
            w = words(args)
            flags = [x for x in w if x.startswith("--")]
            paths = [x for x in w if not x.startswith("--")]
            src_from = next((f.split("=", 1)[1] for f in flags if f.startswith("--from=")), None)
            out.append({"from": src_from, "sources": paths[:-1],
                        "dest": str(PurePosixPath(workdir) / paths[-1]), "workdir": workdir})
    return out


def final_stage(dockerfile: Path) -> dict:
    """WORKDIR, ENTRYPOINT and CMD of the last stage."""
    st: dict = {"workdir": "/", "entrypoint": None, "cmd": None}
    for ins, args in instructions(dockerfile):
        if ins == "FROM":
            st = {"workdir": "/", "entrypoint": None, "cmd": None}
        elif ins == "WORKDIR":
            st["workdir"] = str(PurePosixPath(st["workdir"]) / args)
        elif ins in ("ENTRYPOINT", "CMD"):
            st[ins.lower()] = words(args)
    return st


def images(dockerfile: Path) -> list[str]:
    """Every image a Dockerfile pulls: FROM lines and COPY --from=IMAGE (not stage names), a
    ``${ARG}`` read as the default its ARG line gives."""
    stages, out, args_default = set(), [], {}
    for ins, args in instructions(dockerfile):
        if ins == "ARG" and "=" in args:
            name, _, value = args.partition("=")
            args_default[name.strip()] = value.strip()
        if ins == "FROM":
            w = re.sub(r"\$\{(\w+)\}", lambda m: args_default.get(m.group(1), m.group(0)),
                       args).split()
            if w[0] not in stages:
                out.append(w[0])
            if len(w) == 3 and w[1].upper() == "AS":
                stages.add(w[2])
    out += [c["from"] for c in copies(dockerfile) if c["from"] and c["from"] not in stages
            and not c["from"].isdigit()]
    return out


def dockerignore_patterns() -> list[str]:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    return [x.strip().strip("/") for x in lines if x.strip() and not x.startswith("#")]


def _glob_regex(pattern: str) -> re.Pattern:
    rx, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            rx, i = rx + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            rx, i = rx + ".*", i + 2
        elif pattern[i] == "*":
            rx, i = rx + "[^/]*", i + 1
        elif pattern[i] == "?":
            rx, i = rx + "[^/]", i + 1
        else:
            rx, i = rx + re.escape(pattern[i]), i + 1
    return re.compile(rx + r"\Z")


def dockerignored(rel: str) -> bool:
    """Whether .dockerignore keeps ``rel`` (or a directory above it) out of the context."""
    parts = PurePosixPath(rel).parts
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    ignored = False
    for pat in dockerignore_patterns():
        neg = pat.startswith("!")
        rx = _glob_regex(pat.lstrip("!"))
        if any(rx.match(p) for p in prefixes):
            ignored = not neg
    return ignored


def built_services() -> dict[str, tuple[Path, Path]]:
    """service -> (context dir, Dockerfile) for every service that is built."""
    out = {}
    for name, svc in services().items():
        if "build" in svc:
            b = svc["build"]
            ctx = ROOT / (b if isinstance(b, str) else b.get("context", "."))
            out[name] = (ctx, ctx / (b.get("dockerfile", "Dockerfile") if isinstance(b, dict)
                                     else "Dockerfile"))
    return out


# -- rendered activemq.xml ---------------------------------------------------------------------
def bind_mounts(svc: dict) -> list[tuple[str, str]]:
    """(host source relative to the repository, container target) of short-syntax binds."""
    out = []
    for v in svc.get("volumes", []):
        src, target = v.split(":")[:2]
        if src.startswith((".", "/")):
            out.append((os.path.normpath(src), target))
    return out


def broker_xml(service: str) -> Path:
    """The committed activemq.xml a broker service runs: its command's file, via its binds."""
    svc = services()[service]
    target = next(a for a in svc["command"] if not a.startswith("--"))
    src = [s for s, t in bind_mounts(svc) if t == target]
    assert src, f"{service}: {target} is not bind-mounted"
    return ROOT / src[0]


def connector_ports(xml: Path) -> dict[str, int]:
    """transportConnector name -> port."""
    root = ET.parse(xml).getroot()
    return {e.get("name"): urlsplit(e.get("uri")).port
            for e in root.iter() if e.tag.endswith("}transportConnector")}


def data_dir(xml: Path) -> str:
    root = ET.parse(xml).getroot()
    return next(e.get("dataDirectory") for e in root.iter() if e.tag.endswith("}broker"))


def healthcheck_ports(svc: dict) -> set[int]:
    return {int(p) for p in re.findall(r"/dev/tcp/127\.0\.0\.1/(\d+)",
                                       " ".join(svc["healthcheck"]["test"]))}


# -- the compose file as a whole ---------------------------------------------------------------
def _config(tmp_path, env_file: Path) -> dict:
    exe = shutil.which("docker-compose")
    if not exe:
        pytest.skip("docker-compose is not installed (Debian package docker-compose)")
    r = subprocess.run(
        [exe, "--env-file", str(env_file), "-f", str(COMPOSE), "config"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}, check=False,
    )
    assert r.returncode == 0, r.stderr
    return yaml.safe_load(r.stdout)


def test_docker_compose_config_passes_without_any_env_file(tmp_path):
    """``docker compose up`` as typed: no .env, and no password anywhere in the file."""
    empty = tmp_path / "no.env"
    empty.write_text("")
    resolved = _config(tmp_path, empty)
    assert set(resolved["services"]) == SERVICES
    svcs = resolved["services"]
    pg, b = svcs["postgres"]["environment"], svcs["broker-b"]["environment"]
    for key in ("DB", "USER", "PASSWORD"):
        assert pg[f"POSTGRES_{key}"] in ("", None) and f"BURSTBENCH_PG_{key}" not in b
        assert pg[f"POSTGRES_{key}_FILE"] == b[f"BURSTBENCH_PG_{key}_FILE"]
        assert pg[f"POSTGRES_{key}_FILE"].startswith("/run/burstbench/credentials/")
    mounts = {name: [v if isinstance(v, str) else f"{v.get('source')}:{v.get('target')}"
                     for v in svc.get("volumes", [])] for name, svc in svcs.items()}
    holders = {n for n, vols in mounts.items() if any(v.startswith("credentials:") for v in vols)}
    assert holders == {"postgres", "broker-b"}
    # only the database writes them; the broker reads
    assert "credentials:/run/burstbench/credentials:ro" in mounts["broker-b"]

    # the database: only on the internal network, nothing published
    assert set(svcs["postgres"]["networks"]) == {"database"} and "ports" not in svcs["postgres"]
    assert resolved["networks"]["database"]["internal"] is True
    assert set(svcs["broker-b"]["networks"]) == {"default", "database"}


def test_env_still_overrides_the_generated_credentials(tmp_path):
    env_file = tmp_path / ".env"
    env_file.write_text((ROOT / ".env.example").read_text() + "POSTGRES_PASSWORD=mine\n")
    env = _config(tmp_path, env_file)["services"]["postgres"]["environment"]
    assert (env["POSTGRES_DB"], env["POSTGRES_USER"], env["POSTGRES_PASSWORD"]) == \
        ("activemq", "bench", "mine")


def _credentials_script(volume: Path) -> str:
    """The postgres image's credentials script as its entrypoint runs it, on ``volume``."""
    script = ROOT / "deploy" / "postgres" / "credentials.sh"
    assert "burstbench-credentials" in (ROOT / "deploy/postgres/entrypoint.sh").read_text()
    return f"{shlex.quote(str(script))} {shlex.quote(str(volume))}"


def test_the_credentials_are_generated_once_and_env_overrides(tmp_path):
    sh = shutil.which("sh")
    vol = tmp_path / "credentials"
    vol.mkdir()
    base = {"PATH": "/usr/bin:/bin"}
    run = lambda env: subprocess.run([sh, "-c", _credentials_script(vol)],  # noqa: E731
                                     env={**base, **env}, capture_output=True, text=True,
                                     timeout=30, check=True)
    run({"POSTGRES_DB": "", "POSTGRES_USER": "", "POSTGRES_PASSWORD": ""})
    pw = (vol / "postgres_password").read_text()
    assert re.fullmatch(r"[A-Za-z0-9]{32}", pw)
    assert (vol / "postgres_db").read_text() == "activemq"
    assert (vol / "postgres_user").read_text() == "bench"
    assert all(oct((vol / f).stat().st_mode & 0o777) == "0o444" for f in
               ("postgres_db", "postgres_user", "postgres_password"))
    run({})  # a second start keeps what the first made
    assert (vol / "postgres_password").read_text() == pw
    vol2 = tmp_path / "other"
    vol2.mkdir()
    subprocess.run([sh, "-c", _credentials_script(vol2)], env=base, capture_output=True,
                   check=True, timeout=30)
    assert (vol2 / "postgres_password").read_text() != pw  # random, not a fixed value
    run({"POSTGRES_PASSWORD": "from-env", "POSTGRES_USER": "me"})
    assert (vol / "postgres_password").read_text() == "from-env"
    assert (vol / "postgres_user").read_text() == "me"


def test_entrypoint_reads_credentials_from_files(tmp_path):
    (tmp_path / "pw").write_text("s&cret")
    (tmp_path / "user").write_text("bench")
    env = {**_stub_java(tmp_path), "BURSTBENCH_PG_HOST": "postgres", "BURSTBENCH_PG_PORT": "5432",
           "BURSTBENCH_PG_DB": "activemq", "BURSTBENCH_PG_USER_FILE": str(tmp_path / "user"),
           "BURSTBENCH_PG_PASSWORD_FILE": str(tmp_path / "pw")}
    r = _entrypoint(env, str(ROOT / "deploy/broker-b.xml"))
    assert r.returncode == 0, r.stderr
    props = {e.get("name"): e.get("value") for e in
             ET.parse(tmp_path / "run" / "activemq.xml").getroot().iter()
             if e.tag.endswith("}property")}
    assert (props["username"], props["password"]) == ("bench", "s&cret")
    both = {**env, "BURSTBENCH_PG_PASSWORD": "x"}
    r = _entrypoint(both, str(ROOT / "deploy/broker-b.xml"))
    assert r.returncode == 2 and "both BURSTBENCH_PG_PASSWORD and" in r.stderr
    gone = {**env, "BURSTBENCH_PG_USER_FILE": str(tmp_path / "missing")}
    r = _entrypoint(gone, str(ROOT / "deploy/broker-b.xml"))
    assert r.returncode == 2 and "cannot read" in r.stderr


def test_every_required_variable_is_in_env_example_and_env_is_ignored():
    example = dict(
        line.split("=", 1) for line in (ROOT / ".env.example").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    )
    used = set(re.findall(r"\$\{(\w+)(?::?[-?][^}]*)?\}", COMPOSE.read_text()))
    required = set(re.findall(r"\$\{(\w+):?\?", COMPOSE.read_text()))
    assert required <= set(example), required - set(example)
    assert set(example) <= used, f"unused in docker-compose.yml: {set(example) - used}"
    assert ".env" in (ROOT / ".gitignore").read_text().split()


def test_every_service_that_waits_waits_for_a_health_check():
    svcs = services()
    assert set(svcs) == SERVICES
    for name in ("broker-a", "broker-b", "postgres", "bridge"):
        assert svcs[name].get("healthcheck", {}).get("test"), f"{name} has no health check"
    for name, svc in svcs.items():
        for dep, how in svc.get("depends_on", {}).items():
            assert dep in svcs, f"{name} depends on unknown {dep}"
            assert how == {"condition": "service_healthy"}, (name, dep)
            assert svcs[dep].get("healthcheck"), f"{name} waits for {dep}, which has no check"


def test_build_contexts_and_dockerfiles_exist():
    built = built_services()
    assert set(built) == {"broker-a", "broker-b", "bridge", "bench", "postgres"}
    for name, (ctx, dockerfile) in built.items():
        assert ctx.is_dir(), f"{name}: context {ctx} missing"
        assert ctx.resolve() in (ROOT, dockerfile.parent.resolve()), f"{name}: context {ctx}"
        assert dockerfile.is_file(), f"{name}: {dockerfile} missing"


def test_every_file_a_dockerfile_copies_is_in_its_context():
    for (ctx, dockerfile) in built_services().values():
        for c in copies(dockerfile):
            if c["from"]:
                continue
            for src in c["sources"]:
                if src == ".":
                    continue
                assert (ctx / src).exists(), f"{dockerfile.relative_to(ROOT)}: COPY {src} missing"
                rel = (ctx / src).resolve().relative_to(ROOT).as_posix()
                assert not dockerignored(rel), f"{dockerfile.relative_to(ROOT)}: {src} is " \
                    ".dockerignored"


def test_dockerignore_keeps_host_builds_results_and_secrets_out():
    for rel in (".git/HEAD", ".venv/bin/python", "clients/node/node_modules/x",
                "broker/target/lib/x.jar", "results/latest", ".env", ".setup/venv"):
        assert dockerignored(rel), rel
    for rel in ("bench", "pyproject.toml", "burstbench/cli.py", ".env.example",
                "clients/node/package-lock.json", "deploy/broker-entrypoint.sh"):
        assert not dockerignored(rel), rel


def test_every_base_image_is_pinned_to_an_exact_version():
    pulled = [s["image"] for s in services().values() if "build" not in s]
    for _ctx, dockerfile in set(built_services().values()):
        pulled += images(dockerfile)
    assert pulled
    for image in pulled:
        _name, _, tag = image.partition(":")
        assert tag and tag != "latest" and re.search(r"\d+\.\d+", tag), f"{image} is not pinned"


def test_bind_mounted_paths_exist():
    declared = set(compose().get("volumes") or {})
    for name, svc in services().items():
        for v in svc.get("volumes", []):
            src = v.split(":")[0]
            if not src.startswith((".", "/")):
                assert src in declared, f"{name}: named volume {src} is not declared"
        for src, _target in bind_mounts(svc):
            if src in OUTPUT_MOUNTS:
                continue
            assert (ROOT / src).exists(), f"{name}: bind-mounted {src} missing"


# -- each service's command --------------------------------------------------------------------
def test_bench_command_parses_with_the_harness_parser(capsys):
    svc = services()["bench"]
    argv = list(svc["command"])
    assert argv[0] == "./bench" and (ROOT / "bench").is_file()
    try:
        args = cli.build_parser().parse_args(argv[1:])
    except SystemExit as e:
        pytest.fail(f"burstbench.cli rejects {argv[1:]} (exit {e.code}): {capsys.readouterr().err}")
    assert args.command == "sweep"
    assert (ROOT / "profiles" / f"{args.profile}.yaml").is_file()
    assert len(args.broker_url) == len(BROKERS)
    for text, service in zip(args.broker_url, BROKERS, strict=True):
        outside.parse_external(service, text)
        ports = connector_ports(broker_xml(service))
        for url in text.split(","):
            u = urlsplit(url)
            assert u.hostname == service, url
            assert u.port == ports[SCHEME_PROTOCOL[u.scheme]], f"{url}: not the port it renders"


def test_every_point_the_compose_bench_sweeps_applies_to_the_compose_brokers():
    """The bench service's sweep, expanded as ./bench sweep expands it with its --broker-url
    brokers: no point is refused (skipped points fail a sweep), none asks the bench to
    configure a broker it did not start (persistence, TLS, credentials, namespaces, --broker),
    and every topology's brokers are there."""
    from burstbench import profiles, sweep

    args = cli.build_parser().parse_args(list(services()["bench"]["command"])[1:])
    points = sweep.expand(profiles.load_profile(args.profile),
                          overrides={"broker_urls": args.broker_url})
    assert len(points) >= 20
    for p in points:
        p.spec.validate()  # a ValueError here is a point the sweep would skip
        assert p.spec.persistence == "none" and not p.spec.tls and not p.spec.auth, p.id
        assert p.spec.hosts == "loopback" and p.spec.broker == "classic", p.id
    assert {p.spec.topology for p in points} == {"single", "forward"}


def test_bench_results_mount_is_where_the_harness_writes():
    svc = services()["bench"]
    workdir = final_stage(built_services()["bench"][1])["workdir"]
    targets = dict(bind_mounts(svc))
    assert targets.get("results") == f"{workdir}/results"


def _launcher_options() -> set[str]:
    main = (ROOT / "broker/src/main/java/burstbench/broker/Main.java").read_text()
    return set(re.findall(r'case "(--[a-z-]+)"', main))


@pytest.mark.parametrize("service", BROKERS)
def test_broker_command_is_launcher_arguments_on_a_committed_file(service):
    svc = services()[service]
    dockerfile = built_services()[service][1]
    st = final_stage(dockerfile)
    # the image's entrypoint is deploy/broker-entrypoint.sh, which passes the arguments on
    entry = [c for c in copies(dockerfile) if c["dest"] == f"/usr/local/bin/{st['entrypoint'][0]}"]
    assert entry and entry[0]["sources"] == ["deploy/broker-entrypoint.sh"]
    assert os.access(ROOT / "deploy/broker-entrypoint.sh", os.X_OK)
    opts = [a for a in svc["command"] if a.startswith("--")]
    assert set(opts) <= _launcher_options() - {"--check", "--version"}, opts
    assert len(svc["command"]) - len(opts) == 1, "the launcher takes exactly one file"
    xml = broker_xml(service)
    assert xml.parent == ROOT / "deploy"
    ports = connector_ports(xml)
    assert set(ports) == {"openwire", "stomp", "ws"}
    assert healthcheck_ports(svc) == set(ports.values())
    data = [t for v in svc["volumes"] if not v.startswith((".", "/", "credentials:"))
            for t in [v.split(":")[1]]]
    assert data == [f"{st['workdir']}/{data_dir(xml)}"], "the data directory is not the volume"


def test_broker_image_classpath_is_what_the_build_stage_copies():
    dockerfile = ROOT / "broker/Dockerfile"
    script = (ROOT / "deploy/broker-entrypoint.sh").read_text()
    cp = re.search(r"BURSTBENCH_BROKER_CP:-([^}]*)\}", script).group(1)
    dests = {c["dest"] for c in copies(dockerfile) if c["from"] == "build"}
    assert {e.removesuffix("/*") for e in cp.split(":")} <= dests


def test_bridge_runs_app_configured_by_variables_it_reads():
    svc = services()["bridge"]
    dockerfile = ROOT / "akka-bridge/Dockerfile"
    entry = final_stage(dockerfile)["entrypoint"]
    assert entry[0] == "java" and entry[-1] == "burstbench.bridge.http.App"
    assert (ROOT / "akka-bridge/src/main/java/burstbench/bridge/http/App.java").is_file()
    cp = entry[entry.index("-cp") + 1]
    dests = {c["dest"] for c in copies(dockerfile) if c["from"] == "build"}
    assert {e.removesuffix("/*") for e in cp.split(":")} <= dests
    assert "command" not in svc, "App takes no arguments: configure it with BRIDGE_* variables"
    conf = (ROOT / "akka-bridge/src/main/resources/application.conf").read_text()
    known = set(re.findall(r"\$\{\?(BRIDGE_\w+)\}", conf))
    env = svc["environment"]
    assert set(env) <= known, set(env) - known
    u = urlsplit(env["BRIDGE_BROKER_URL"])
    assert u.hostname == "broker-a"
    assert u.port == connector_ports(broker_xml("broker-a"))["openwire"]
    port = int(env["BRIDGE_PORT"])
    assert healthcheck_ports(svc) == {port}
    assert all(p.rsplit(":", 1)[1] == str(port) for p in svc["ports"])


# -- the rendered files and the entrypoint -----------------------------------------------------
def test_committed_broker_files_equal_a_fresh_render(tmp_path):
    r = subprocess.run([str(ROOT / "deploy/render.sh"), str(tmp_path)], capture_output=True,
                       text=True, timeout=120, env={**os.environ, "PYTHON": sys.executable},
                       check=False)
    assert r.returncode == 0, r.stderr
    for name in ("broker-a.xml", "broker-b.xml"):
        fresh, committed = (tmp_path / name).read_text(), (ROOT / "deploy" / name).read_text()
        assert fresh == committed, f"deploy/{name} differs from the template: run deploy/render.sh"
    assert "${BURSTBENCH_PG_PASSWORD}" in committed


def test_render_rejects_what_it_cannot_render(capsys):
    base = ["render", "--name", "x", "--host", "0.0.0.0", "--openwire-port", "1",
            "--stomp-port", "2", "--ws-port", "3", "--data-dir", "d"]
    for extra in (["--persistence", "jdbc-postgres"], ["--jdbc-user", "u"],
                  ["--network-to", "broker-b"], ["--ws-port", "70000"]):
        with pytest.raises(SystemExit) as e:
            brokers.main(base + extra)
        assert e.value.code == 2, extra
    capsys.readouterr()


def _stub_java(tmp_path: Path) -> dict:
    """An environment whose ``java`` prints its arguments, one a line, and nothing else."""
    for tool in ("bash", "perl"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not installed")
    stub = tmp_path / "stub"
    stub.mkdir()
    (stub / "java").write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    (stub / "java").chmod(0o755)
    return {"PATH": f"{stub}:/usr/bin:/bin", "BURSTBENCH_RUN_DIR": str(tmp_path / "run")}


def _entrypoint(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "deploy/broker-entrypoint.sh"), *args], env=env,
                          capture_output=True, text=True, timeout=60, check=False)


def test_entrypoint_fills_placeholders_xml_escaped_and_execs_the_launcher(tmp_path):
    password = "p&<>\"'$x\\1 ${BURSTBENCH_PG_USER}"
    env = {**_stub_java(tmp_path), "BURSTBENCH_PG_HOST": "postgres", "BURSTBENCH_PG_PORT": "5432",
           "BURSTBENCH_PG_DB": "activemq", "BURSTBENCH_PG_USER": "bench",
           "BURSTBENCH_PG_PASSWORD": password, "BURSTBENCH_BROKER_HEAP": "300m"}
    r = _entrypoint(env, "--watch-stdin", str(ROOT / "deploy/broker-b.xml"))
    assert r.returncode == 0, r.stderr
    resolved = tmp_path / "run" / "activemq.xml"
    assert r.stdout.splitlines() == [
        "-Xms300m", "-Xmx300m", "-XX:+UseParallelGC", "-Djava.net.preferIPv4Stack=true", "-cp",
        "/opt/burstbench/broker/classes:/opt/burstbench/broker/lib/*", "burstbench.broker.Main",
        "--watch-stdin", str(resolved)]
    props = {e.get("name"): e.get("value") for e in ET.parse(resolved).getroot().iter()
             if e.tag.endswith("}property")}
    assert props["password"] == password  # escaped once, and not substituted twice
    assert props["username"] == "bench"
    assert props["url"] == "jdbc:postgresql://postgres:5432/activemq"
    assert resolved.read_text().count("${") == 1  # the one inside the password


def test_entrypoint_refuses_an_unset_placeholder(tmp_path):
    env = _stub_java(tmp_path)
    r = _entrypoint(env, str(ROOT / "deploy/broker-b.xml"))
    assert r.returncode != 0 and "BURSTBENCH_PG_HOST is not set" in r.stderr
    assert "burstbench.broker.Main" not in r.stdout
    assert _entrypoint(env).returncode == 2


# -- the launcher's --check on the committed files (it starts the broker to validate) ----------
def _taken(ports) -> int | None:
    for port in ports:
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("0.0.0.0", port))
            except OSError:
                return port
    return None


def _check(xml: Path, cwd: Path) -> dict:
    """The launcher's --check: loads and validates the file, starts nothing, binds nothing."""
    r = subprocess.run(brokers.java_argv(xml, "256m", ["--check"]), cwd=cwd,
                       capture_output=True, text=True, timeout=180, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.integration
def test_launcher_check_accepts_broker_a(tmp_path):
    need_broker_built()
    assert _check(broker_xml("broker-a"), tmp_path) == {"event": "checked", "broker": "a"}
    assert not (tmp_path / data_dir(broker_xml("broker-a"))).exists(), "--check started it"


@pytest.mark.integration
def test_launcher_check_accepts_broker_b_once_the_entrypoint_fills_it_in(tmp_path):
    need_broker_built()
    env = {**_stub_java(tmp_path), "BURSTBENCH_PG_HOST": "postgres", "BURSTBENCH_PG_PORT": "5432",
           "BURSTBENCH_PG_DB": "activemq", "BURSTBENCH_PG_USER": "bench",
           "BURSTBENCH_PG_PASSWORD": "p&<w>\"'d"}
    r = _entrypoint(env, str(broker_xml("broker-b")))
    assert r.returncode == 0, r.stderr
    resolved = Path(r.stdout.splitlines()[-1])
    assert _check(resolved, tmp_path) == {"event": "checked", "broker": "b"}
