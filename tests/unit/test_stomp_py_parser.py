"""The tuned stomp.py client's frame parser (clients/python/tuned.py) against the library's own."""

import sys

import pytest

from burstbench import paths

sys.path.insert(0, str(paths.CLIENTS / "python"))
import stomp.utils
import tuned

FRAMES = [
    b"MESSAGE\ncontent-length:6\ndestination:/queue/q\nbb_seq:7\n\n000007",
    b"MESSAGE\nmessage-id:ID\\chost-1\\c1\\c1\nsubscription:0\n\nbody",
    b"MESSAGE\nk:a\\\\cb\\\\\\cc\nx\\cy:1\n\n",  # escaped backslashes, an escaped key
    b"MESSAGE\nk:line\\nbreak\\rcr\\tunknown\n\n",
    b"MESSAGE\ndup:first\ndup:second\n\nb",  # the first of a repeated header wins
    b"\n\n\nRECEIPT\nreceipt-id:r-1\n\n",  # leading EOLs
    b"ERROR\nmessage:a:b:c\nno colon here\n:empty key\n\ndetails\n",
    b"MESSAGE\r\nk:v\r\n\r\nbody",  # CRLF lines: the library's parser
    b"CONNECTED\nversion:1.1\nserver:ActiveMQ/6.1.7\n\n",
    b"MESSAGE\nk:\n\n\x00\xffbinary",
    b"\n",
]


@pytest.mark.parametrize("raw", FRAMES, ids=range(len(FRAMES)))
def test_parse_frame_gives_what_the_library_gives(raw):
    ours, theirs = tuned.parse_frame(raw), stomp.utils.parse_frame(raw)
    if theirs is None:
        assert ours is None
        return
    assert (ours.cmd, ours.headers, ours.body) == (theirs.cmd, theirs.headers, theirs.body)
