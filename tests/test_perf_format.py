"""./bench perf's table (pure formatting): the CLI send row compares like with like."""

from harness.perf import format_row


def _spread(m):
    return {"median": m, "min": m - 1, "max": m + 1}


def test_the_cli_send_row_shows_our_rate_to_the_last_send_call():
    row = {
        "client": "openwire-jms",
        "size": 6,
        "send": {"loop": _spread(1000), "client": _spread(1200), "ratio": 1.2,
                 "activemq_cli": _spread(900), "client_like_cli": _spread(1250),
                 "ratio_to_cli": 1250 / 900},
        "recv": {"loop": _spread(10), "client": _spread(20), "ratio": 2.0},
    }
    lines = format_row(row).splitlines()
    assert len(lines) == 3  # send, its CLI row, recv (no CLI figure for receive here)
    cli = lines[1]
    assert cli.lstrip().startswith("vs ActiveMQ CLI*") and "1,250" in cli and "1.39" in cli
    assert "1,200" not in cli  # the confirmed-send rate is the row above, not this one
