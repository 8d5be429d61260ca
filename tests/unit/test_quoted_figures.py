"""Every figure README.md and docs/ quote is the one its published run's summary gives
(burstbench/plots/quoted.py); the rendering rules on a summary made up here."""

import csv

import pytest

from burstbench.plots import quoted


def _summary(tmp_path, rows):
    data = tmp_path / "data"
    data.mkdir()
    cols = ["point", "status", "size", *quoted.SPREAD["recv"], "latency_ms.p99",
            "sustained.keeps_up"]
    with (data / "r1.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, cols)
        w.writeheader()
        w.writerows(rows)
    quoted.rows_of.cache_clear()
    return data


ROWS = [
    {"point": "a", "status": "ok", "size": 65536, "throughput.recv_msgs_per_s": 18108.4,
     "throughput.recv_min": 16020, "throughput.recv_max": 19950, "latency_ms.p99": 3.64,
     "sustained.keeps_up": True},
    {"point": "b", "status": "ok", "throughput.recv_msgs_per_s": 12069,
     "throughput.recv_min": 11757, "throughput.recv_max": 12939, "latency_ms.p99": 40.1},
    {"point": "c", "status": "failed", "throughput.recv_msgs_per_s": 99,
     "throughput.recv_min": 1, "throughput.recv_max": 100, "latency_ms.p99": ""},
]


def test_a_spread_wider_than_a_tenth_gives_two_significant_figures(tmp_path):
    data = _summary(tmp_path, ROWS)
    assert quoted.render_one("r1 a recv", data) == "18,000 (16,000-20,000)"  # 22% wide
    assert quoted.render_one("r1 b recv", data) == "12,100 (11,800-12,900)"  # 9.8% wide
    assert quoted.render_one("r1 a latency_ms.p99", data) == "3.64"
    assert quoted.render_one("r1 b ratio=a", data) == "0.67"
    assert quoted.render_one("r1 a sustained.keeps_up", data) == "yes"


def test_a_page_names_a_run_once_and_quotes_bandwidth(tmp_path):
    data = _summary(tmp_path, ROWS)
    text = "<!--figrun blog r1--> <!--fig blog a mib-->?<!--/fig-->"
    new, diffs = quoted.render(text, "page.md", data)
    assert "<!--fig blog a mib-->1,100 (1,000-1,200)<!--/fig-->" in new  # 18,108 x 64 KiB
    assert len(diffs) == 1


def test_a_find_max_verdict_is_quoted_from_its_search(tmp_path):
    import json

    data = _summary(tmp_path, ROWS)
    (data / "r1-find-max.json").write_text(json.dumps(
        {"find-max/net-stomp": {"max_sustainable_msgs_per_s": 11096.6}}))
    assert quoted.render_one("r1 find-max/net-stomp findmax", data) == "11,100"
    with pytest.raises(quoted.QuoteError, match="no maximum sustainable rate"):
        quoted.render_one("r1 find-max/stomp-py findmax", data)


def test_a_runtimes_row_is_quoted_from_the_published_study(tmp_path):
    import json

    data = _summary(tmp_path, ROWS)
    spread = {"akka": {"median": 571000, "min": 560000, "max": 580000},
              "pekko": {"median": 669000, "min": 600000, "max": 700000}}
    (data / "r1-runtimes.json").write_text(json.dumps({"summary": [
        {"key": ["bursts", 6], "status": "ok", "values": spread, "pekko_over_akka": 1.1716},
        {"key": ["ask", 1], "status": "ok", "values": spread, "p50_us": spread,
         "pekko_over_akka": 1.0},
        {"key": ["pi", 1, 10, 10], "status": "failed"}]}))
    assert quoted.render_one("r1 runtimes:bursts/6 akka", data) == "571,000 (560,000-580,000)"
    assert quoted.render_one("r1 runtimes:bursts/6 pekko", data) == "670,000 (600,000-700,000)"
    assert quoted.render_one("r1 runtimes:bursts/6 ratio", data) == "1.17"
    assert quoted.render_one("r1 runtimes:ask/1 pekko-p50", data) == "670,000 (600,000-700,000)"
    for spec, needle in (("runtimes:pi/1/10/10 akka", "failed"), ("runtimes:ask/2 akka", "no row"),
                         ("runtimes:bursts/6 akka-p50", "no figure"),
                         ("runtimes:bursts/6 graal", "no figure")):
        with pytest.raises(quoted.QuoteError, match=needle):
            quoted.render_one(f"r1 {spec}", data)


def test_a_fault_scenario_is_quoted_from_the_published_chaos_results(tmp_path):
    import json

    data = _summary(tmp_path, ROWS)
    tally = {"sent": 6000, "received": 6000, "lost": 0, "duplicates": 3370, "redelivered": 12}
    (data / "r1-chaos.json").write_text(json.dumps({"results": [
        {"scenario": "broker-kill", "client": "net-stomp", "status": "ok", "tally": tally,
         "recovery_s": 2.144},
        {"scenario": "slow-consumer", "client": "stompjs", "status": "ok", "tally": tally,
         "recovery_s": None},
        {"scenario": "link-cut", "client": "stomp-py", "status": "failed", "tally": tally}]}))
    assert quoted.render_one("r1 chaos:broker-kill/net-stomp cell", data) == "0 / 3,370 / 2.14"
    assert quoted.render_one("r1 chaos:slow-consumer/stompjs cell", data) == "0 / 3,370 / -"
    assert quoted.render_one("r1 chaos:broker-kill/net-stomp sent", data) == "6,000"
    for spec, needle in (("chaos:link-cut/stomp-py cell", "'failed'"),
                         ("chaos:link-cut/perl cell", "no chaos result"),
                         ("chaos:broker-kill/net-stomp speed", "no figure")):
        with pytest.raises(quoted.QuoteError, match=needle):
            quoted.render_one(f"r1 {spec}", data)


def test_a_figure_that_differs_from_its_source_is_named(tmp_path):
    data = _summary(tmp_path, ROWS)
    text = "x <!--fig r1 a recv-->18,108<!--/fig--> y <!--fig r1 b latency_ms.p99-->40.1<!--/fig-->"
    new, diffs = quoted.render(text, "page.md", data)
    assert [(d.spec, d.written, d.source) for d in diffs] == [
        ("r1 a recv", "18,108", "18,000 (16,000-20,000)")]
    assert "<!--fig r1 a recv-->18,000 (16,000-20,000)<!--/fig-->" in new


@pytest.mark.parametrize("spec, needle", [
    ("r1 c recv", "is 'failed', not ok"),
    ("r1 zz recv", "no point zz"),
    ("r1 a nosuch.column", "no column nosuch.column"),
    ("r2 a recv", "no published run r2"),
    ("r1 a", "takes RUN POINT WHAT"),
])
def test_a_marker_without_a_good_source_is_an_error(tmp_path, spec, needle):
    data = _summary(tmp_path, ROWS)
    with pytest.raises(quoted.QuoteError, match=needle):
        quoted.render_one(spec, data)


def test_every_quoted_figure_of_the_readme_and_docs_matches_its_published_run():
    n, diffs = quoted.check()
    assert not diffs, "\n".join(map(str, diffs)) + "\n(./bench docs render rewrites them)"
    readme = (quoted.paths.ROOT / "README.md").read_text()
    assert len(quoted.MARK.findall(readme)) >= 10, "the README's tables quote marked figures"
    assert n >= len(quoted.MARK.findall(readme))


def test_publish_takes_a_complete_clean_run_and_no_machine_path(tmp_path):
    import json

    run = tmp_path / "r9"
    run.mkdir()
    (run / "summary.csv").write_text("point,status\na,ok\n")
    manifest = {"run_id": "r9", "status": "complete", "git_commit": "abc123",
                "command": ["/home/u/burstbench/.venv/bin/burstbench", "sweep"]}
    for bad, needle in ((dict(manifest, status="failed"), "only a complete run"),
                        (dict(manifest, git_commit="abc123-dirty"), "from a clean commit")):
        (run / "run.json").write_text(json.dumps(bad))
        with pytest.raises(quoted.QuoteError, match=needle):
            quoted.publish(run, tmp_path / "data")
    (run / "run.json").write_text(json.dumps(manifest))
    csv_out, json_out = quoted.publish(run, tmp_path / "data")
    assert csv_out.read_text() == "point,status\na,ok\n"
    assert json.loads(json_out.read_text())["command"] == ["burstbench", "sweep"]


def test_publish_partial_takes_a_finished_run_with_failed_points_never_their_figures(tmp_path):
    import json

    run = tmp_path / "r8"
    run.mkdir()
    (run / "summary.csv").write_text("point,status,throughput.recv_msgs_per_s\n"
                                     "calibration,ok,9\na,ok,5\nb,failed,\n")
    manifest = {"run_id": "r8", "status": "failed", "git_commit": "abc123",
                "finished": "2026-12-03T00:58:38+00:00", "failed_points": 1, "command": []}
    (run / "run.json").write_text(json.dumps(manifest))
    with pytest.raises(quoted.QuoteError, match="--partial publishes one"):
        quoted.publish(run, tmp_path / "data")
    for bad in (dict(manifest, status="interrupted"), dict(manifest, finished=None),
                dict(manifest, failed_points=0)):
        (run / "run.json").write_text(json.dumps(bad))
        with pytest.raises(quoted.QuoteError, match="only a complete run"):
            quoted.publish(run, tmp_path / "data", partial=True)
    (run / "run.json").write_text(json.dumps(manifest))
    _, json_out = quoted.publish(run, tmp_path / "data", partial=True)
    assert json.loads(json_out.read_text())["status"] == "failed"
    with pytest.raises(quoted.QuoteError, match="is 'failed', not ok"):
        quoted.render_one("r8 b recv", tmp_path / "data")


def _perf_run(tmp_path):
    """A finished perf run's directory: one row, its receive judged on 12 one-CPU rounds."""
    import json

    run = tmp_path / "p1"
    run.mkdir()
    rates = {"median": 20000.0, "min": 18000.0, "max": 21000.0}
    ratio = {"median": 0.981, "min": 0.94, "max": 1.01, "n": 12,
             "ci": {"lo": 0.968, "hi": 0.987, "confidence": 0.96}}
    one = {"cpu_us_per_msg": {"loop": {"median": 12.47}, "client": {"median": 12.69}},
           "ratio": ratio, "common": {"rounds": 11, "of": 12},
           "each": {"loop": [{"recv": 1.0}] * 12}}
    recv = {"loop": rates, "client": rates, "ratio_spread": ratio, "one_cpu": one,
            "rounds": {"loop": [1.0] * 5, "client": [1.0] * 5},
            "tuned": {"client": "net-stomp-tuned", "rates": rates, "ratio_to_stock": 1.58,
                      "ratio_spread": {"median": 1.58, "min": 1.5, "max": 1.61, "n": 5},
                      "rounds": [1.0] * 5},
            "vs_cli": {"apart": {"activemq_cli": rates, "client_like_cli": rates,
                                 "ratio_to_cli": 1.0}}}
    send = {"loop": rates, "client": rates, "ratio_spread": ratio,
            "one_cpu": {**one, "ratio": {**ratio, "min": 0.96}}}
    (run / "perf.json").write_text(json.dumps({
        "kind": "perf-clients", "rule": "rule (declared before the run): ...", "rounds": 5,
        "table": [{"client": "net-stomp", "size": 6, "count": 100000, "send": send,
                   "recv": recv}]}))
    (run / "summary.csv").write_text("point,status\n")  # a perf run's: no point
    (run / "run.json").write_text(json.dumps({"run_id": "p1", "status": "complete",
                                              "git_commit": "abc123", "command": []}))
    return run


def test_a_perf_run_is_published_as_its_table_and_quoted_by_row(tmp_path):
    import json

    data = tmp_path / "data"
    out = quoted.publish(_perf_run(tmp_path), data)
    assert [p.name for p in out] == ["p1.json", "p1-perf-clients.json"]
    table = json.loads(out[1].read_text())
    assert table["target"] == 0.95 and "each" not in table["table"][0]["recv"]["one_cpu"]
    assert "rounds" not in table["table"][0]["recv"]["tuned"]

    def q(point, what):
        return quoted.render_one(f"p1 perf:net-stomp/6/{point} {what}", data)

    assert q("recv", "ratio") == "0.981 (0.940-1.010)"
    assert q("recv", "interval") == "0.968-0.987"
    assert q("recv", "verdict") == "within noise"
    assert q("send", "verdict") == "holds"
    assert q("recv", "kept") == "11 of 12"
    assert quoted.render_one("p1 perf:all verdicts", data) == "1 holds, 1 within noise"
    assert (q("recv", "loop-us"), q("recv", "client-us")) == ("12.5", "12.7")
    assert q("recv", "tuned") == "1.58 (1.50-1.61)"
    assert (q("recv", "cli-apart"), q("recv", "vs-cli-apart")) == ("20,000 (18,000-21,000)",
                                                                   "1.00")
    for point, what, needle in (("recv", "speed", "no figure 'speed'"),
                                ("send", "tuned", "no figure 'tuned'"),
                                ("recv", "cli-together", "no figure"),
                                ("size", "ratio", "no row net-stomp/6/size")):
        with pytest.raises(quoted.QuoteError, match=needle):
            q(point, what)


def test_a_run_is_quoted_by_its_wall_time_reference_and_drift_from_another(tmp_path):
    import json

    data = _summary(tmp_path, ROWS)
    later = [{**ROWS[0], "throughput.recv_msgs_per_s": 2 * 18108.4},
             {**ROWS[1], "throughput.recv_msgs_per_s": 1.5 * 12069}, ROWS[2]]
    with (data / "r2.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, list(later[0]))
        w.writeheader()
        w.writerows(later)
    for run, ref, end in (("r1", 1000, "12:11:18"), ("r2", 2000, "14:00:00")):
        (data / f"{run}.json").write_text(json.dumps({
            "started": "2026-12-04T12:00:00+00:00", "finished": f"2026-12-04T{end}+00:00",
            "calibration": {"reference": {"recv_msgs_per_s": ref, "min": ref * 0.8,
                                          "max": ref * 1.2}}}))
    assert quoted.render_one("r1 run wall", data) == "11 min 18 s"
    assert quoted.render_one("r2 run wall", data) == "2 h 0 min"
    assert quoted.render_one("r1 run calibration", data) == "1,000 (800-1,200)"
    assert quoted.render_one("r1 run held=", data) == "2 of 3"  # c failed
    # a: ln 2, b: ln 1.5, the failed point c left out; calibrated a: 0, b: ln 0.75
    assert quoted.render_one("r1 run drift=r2", data) == "0.549 over 2 points"
    assert quoted.render_one("r1 run drift=r2:calibrated", data) == "0.144 over 2 points"
    with pytest.raises(quoted.QuoteError, match="no figure 'speed'"):
        quoted.render_one("r1 run speed", data)


def test_a_soak_is_published_without_its_timeline_and_quoted_by_fault(tmp_path):
    import json

    run = tmp_path / "s1"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"run_id": "s1", "status": "complete",
                                              "git_commit": "abc123"}))
    tally = {"sent": 635000, "received": 635000, "lost": 0, "duplicates": 1927,
             "redelivered": 59, "lost_sample": []}
    faults = [{"at_s": 75.3, "kind": "broker-kill", "target": "b", "recovery_s": 2.191,
               "duplicates": 115, "detail": {"down_s": 2.0}, "t_ns": 1},
              {"at_s": 178.0, "kind": "link-cut", "target": "", "recovery_s": None,
               "duplicates": 0, "detail": {}, "t_ns": 2}]
    (run / "soak.json").write_text(json.dumps({"spec": {"seed": 42}, "rule": "r", "result": {
        "status": "ok", "tally": tally, "notes": ["store at the end"],
        "fault": {"faults": faults, "stats": [{"event": "stats"}] * 3, "store_after": {}}}}))
    (run / "soak.png").write_bytes(b"png")
    (data := tmp_path / "docs" / "data").mkdir(parents=True)
    out = quoted.publish(run, data)
    doc = json.loads((data / "s1-soak.json").read_text())
    assert data / "s1-soak.json" in out and "stats" not in json.dumps(doc)  # no timeline
    assert "lost_sample" not in doc["tally"]  # counts only
    assert (tmp_path / "docs" / "soak.png").read_bytes() == b"png"
    assert quoted.render_one("s1 soak:all sent", data) == "635,000"
    assert quoted.render_one("s1 soak:fault/1 what", data) == "broker-kill b"
    assert quoted.render_one("s1 soak:fault/1 recovery", data) == "2.19"
    assert quoted.render_one("s1 soak:fault/2 recovery", data) == "-"
    assert quoted.render_one("s1 soak:fault/1 at", data) == "75"
    with pytest.raises(quoted.QuoteError, match="no 'fault/3'"):
        quoted.render_one("s1 soak:fault/3 at", data)
