"""The Pi study's configuration: the grid and how workers run (a profile's ``studies.pi``
section, or ``./bench pi``'s options), and the constants every part of the study shares."""

from __future__ import annotations

from dataclasses import dataclass, field

from burstbench import clients, paths
from burstbench.studies.studyfile import config_from_profile

TOLERANCE = 1e-9
LANGUAGES = ("net-stomp", "stomp-py", "stompjs", "openwire-jms")  # clients with a pi-worker
BRIDGE = paths.ROOT / "akka-bridge"
# the actor backends: the bridge's one source tree on each runtime (pekko-bridge/pom.xml)
ACTORS = clients.BRIDGE_MODULES


class StudyError(ValueError):
    """Bad study parameters (reported as one line, exit 2)."""


@dataclass
class PiConfig:
    """One Pi study: the grid, the worker languages taken in turn, and how workers run."""

    workers: list[int] = field(default_factory=lambda: [1, 10])
    messages: list[int] = field(default_factory=lambda: [100, 1000, 10000])
    elements: list[int] = field(default_factory=lambda: [10])
    languages: list[str] = field(default_factory=lambda: ["openwire-jms"])
    java_threads: int = 10  # Java workers per JVM (--threads): W java workers = ceil(W/T) JVMs
    prefetch: int = 1000  # per worker consumer (the JMS default the paper ran with)
    backends: list[str] = field(default_factory=lambda: ["activemq", "akka"])
    idle_timeout: float = 120.0  # seconds without a new result before a point fails

    def validate(self) -> None:
        for key in ("workers", "messages", "elements"):
            vals = getattr(self, key)
            if not vals or any(not isinstance(v, int) or v < 1 for v in vals):
                raise StudyError(f"pi: {key} must be a list of integers >= 1: {vals!r}")
        resolved = []
        for name in self.languages:
            c = clients.get(name)  # UnknownClient is a ValueError
            if c.name not in LANGUAGES:
                raise StudyError(f"pi: no Pi worker for client {c.name} "
                                 f"(have: {', '.join(LANGUAGES)})")
            resolved.append(c.name)
        if not resolved:
            raise StudyError("pi: --workers-lang is empty")
        self.languages = resolved
        if self.java_threads < 1:
            raise StudyError(f"pi: java threads must be >= 1: {self.java_threads}")
        if self.prefetch < 1:
            raise StudyError(f"pi: prefetch must be >= 1: {self.prefetch}")
        bad = set(self.backends) - {"activemq", *ACTORS}
        if bad or not self.backends:
            raise StudyError(f"pi: backends are activemq, {', '.join(ACTORS)}, got "
                             f"{self.backends!r}")

    @classmethod
    def from_profile(cls, profile: str) -> PiConfig:
        return config_from_profile(cls, "pi", profile, StudyError)


def config_from_args(args) -> PiConfig:
    cfg = PiConfig.from_profile(args.profile)
    for key in ("workers", "messages", "elements"):
        text = getattr(args, key)
        if text:
            setattr(cfg, key, _int_list(key, text))
    if args.workers_lang:
        cfg.languages = [s.strip() for s in args.workers_lang.split(",") if s.strip()]
    elif not cfg.languages:
        cfg.languages = ["openwire-jms"]
    if args.java_threads is not None:
        cfg.java_threads = args.java_threads
    if args.prefetch is not None:
        cfg.prefetch = args.prefetch
    if args.backends:
        cfg.backends = [s.strip() for s in args.backends.split(",") if s.strip()]
    cfg.validate()
    return cfg


def _int_list(name: str, text: str) -> list[int]:
    out = []
    for part in text.split(","):
        part = part.strip().replace("_", "")
        if not part.isdigit() or int(part) < 1:
            raise StudyError(f"--{name}: expected integers >= 1, comma-separated: {text!r}")
        out.append(int(part))
    return out
