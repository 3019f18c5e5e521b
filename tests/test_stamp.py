"""The no-change stamp on disk (`agentrc.memo.stamp`): marshalled behind a head naming the
interpreter, read back as written; a pickle where marshal cannot write a value, and the
pickles of earlier versions, read as before; anything else is no stamp, never an error."""

from __future__ import annotations

import os
import pickle

import pytest

from agentrc import pycache
from agentrc.frozen import FrozenMap
from agentrc.memo import cache, stamp

RECORD = {"key": "k" * 64, "manifest": "m" * 64, "outputs": ("a\0b", (1, 2, 3, 4, 5, 6), b"\0" * 64, 2, {}, ("d",)),
          "diagnostics": [{"code": "AR095", "line": 1, "hint": None}], "summary": {"claude": {"items": 3}},
          "files": 2, "sources": {"at": 5, "files": {"x/RULE.md": [1, 2, 3, 4, 5, 6, "0" * 64]}}, "replay": "k"}


def test_a_stamp_is_marshalled_behind_the_head_and_read_back_as_written(tmp_path):
    memo = tmp_path / "build-x.pickle"
    stamp.save_stamp(memo, RECORD)
    data = (tmp_path / "build-x.stamp").read_bytes()
    head = stamp.HEAD + pycache._magic()
    assert data.startswith(head) and data[len(head):len(head) + 32] == __import__("hashlib").sha256(
        data[len(head) + 32:]).digest()
    assert stamp.load_stamp(memo) == RECORD
    assert data == stamp.encoded(RECORD)  # written in parts, laid out as `encoded` joins them
    assert cache.load_stamp is stamp.load_stamp and cache.save_stamp is stamp.save_stamp


def test_the_pickled_stamp_of_an_earlier_version_is_read(tmp_path):
    memo = tmp_path / "build-x.pickle"
    (tmp_path / "build-x.stamp").write_bytes(pickle.dumps(RECORD, protocol=pickle.HIGHEST_PROTOCOL))
    assert stamp.load_stamp(memo) == RECORD


def test_a_value_marshal_cannot_write_is_kept_as_a_pickle(tmp_path):
    memo = tmp_path / "build-x.pickle"
    record = dict(RECORD, summary=FrozenMap({"claude": 3}))
    stamp.save_stamp(memo, record)
    assert not (tmp_path / "build-x.stamp").read_bytes().startswith(stamp.HEAD)
    assert stamp.load_stamp(memo) == record


@pytest.mark.parametrize("damage", ["flipped", "cut", "other interpreter", "not a dict", "garbage", "link",
                                    "directory"])
def test_anything_else_is_no_stamp(tmp_path, damage):
    memo = tmp_path / "build-x.pickle"
    path = tmp_path / "build-x.stamp"
    stamp.save_stamp(memo, RECORD)
    data = path.read_bytes()
    if damage == "flipped":  # one bit of the marshalled record: its checksum no longer matches
        at = len(data) - 40
        path.write_bytes(data[:at] + bytes([data[at] ^ 0x80]) + data[at + 1:])
    elif damage == "cut":
        path.write_bytes(data[:len(data) // 2])
    elif damage == "other interpreter":
        path.write_bytes(stamp.HEAD + b"\x00\x00\r\n" + data[len(stamp.HEAD) + 4:])
    elif damage == "not a dict":
        blob = __import__("marshal").dumps([1, 2])
        path.write_bytes(stamp.HEAD + pycache._magic() + __import__("hashlib").sha256(blob).digest() + blob)
    elif damage == "garbage":
        path.write_bytes(stamp.HEAD + pycache._magic() + os.urandom(64))
    elif damage == "link":
        (tmp_path / "elsewhere").write_bytes(data)
        path.unlink()
        path.symlink_to(tmp_path / "elsewhere")
    else:
        path.unlink()
        path.mkdir()
    assert stamp.load_stamp(memo) is None
