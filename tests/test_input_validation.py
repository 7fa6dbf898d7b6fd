"""Tests of topologies.validation: safe JSON reading within the input limits, the plain-data
check, the one "did you mean" helper, file-name/id/count checks, one-line messages."""
from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topologies import validation
from topologies.loader import TopologyError
from netsim.sweep_file import SweepError
from topologies.validation import (MAX_DEPTH, MAX_FILE_BYTES, MAX_INT_DIGITS, MAX_NAME_BYTES,
                                   InputError, check_plain, closest, count_problem,
                                   file_name_problem, id_problem, one_line, parse_json, quote,
                                   read_json, suggestion)


def write(tmp_path: Path, content, name: str = "in.json") -> Path:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def error_of(path: Path, **kwargs) -> str:
    with pytest.raises(InputError) as info:
        read_json(path, **kwargs)
    message = str(info.value)
    assert len(message.splitlines()) == 1 and message.startswith(f"{path}: ")
    return message


# -- the error classes ------------------------------------------------------------------------------

def test_both_loaders_raise_subclasses_of_the_toolkit_error():
    assert issubclass(TopologyError, InputError) and issubclass(SweepError, InputError)
    assert issubclass(InputError, ValueError)


def test_the_caller_chooses_the_error_class(tmp_path):
    path = write(tmp_path, "[1,")
    with pytest.raises(SweepError):
        read_json(path, error=SweepError)


@pytest.mark.parametrize("text", ["a\nb", "a\rb", "a\x1b[31mb", "a\x85b", "a\u2028b", "a\u2029b",
                                  "a\ud800b", "a\x00b", "a\u202eb"])
def test_messages_are_always_one_printable_line(text):
    message = str(InputError(f"x.json: got {text}"))
    assert len(message.splitlines()) == 1 and message.isprintable()
    message.encode("utf-8")   # no lone surrogate left
    assert one_line("plain text") == "plain text"
    assert str(InputError("a\nb")) == "a\\nb"


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_in_a_message_stays_on_one_line(text):
    for message in (str(InputError(text)), quote(text), one_line(text)):
        assert len(message.splitlines()) <= 1 and message.isprintable()
        message.encode("utf-8")


# -- did you mean ---------------------------------------------------------------------------------

def test_closest_keeps_the_cutoff_and_the_message_shape():
    assert closest("rate_mpbs", ["delay_ms", "rate_mbps"]) == "rate_mbps"
    assert closest("T9", ["T1", "T2"]) == "T1"            # ratio 0.5 is enough; ties: the first
    assert closest("xyz", ["rate_mbps"]) is None
    assert closest(5, ["5"]) is None                        # no suggestion for a non-name
    assert suggestion("bianry", ["si", "binary"]) == ' (did you mean "binary"?)'
    assert suggestion("zzzz", ["si", "binary"]) == ""
    assert suggestion("L", ["L\n1"]) == ' (did you mean "L\\n1"?)'


# -- file names, ids, counts ----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["tc2", "goodput.png", "a b", "ü-名前", "x.", "x" * MAX_NAME_BYTES])
def test_plain_file_names_are_accepted(name):
    assert file_name_problem(name) is None


@pytest.mark.parametrize("name, expected", [
    ("../../x", 'expected a plain file name (no "/"), got "../../x"'),
    ("/abs/x", 'expected a plain file name (no "/"), got "/abs/x"'),
    ("a/b", 'expected a plain file name (no "/"), got "a/b"'),
    ("a\\b", 'expected a plain file name (no "\\\\"), got "a\\\\b"'),
    ("C:x", 'expected a plain file name (no ":"), got "C:x"'),
    ("..", 'expected a plain file name (not "." or ".."), got ".."'),
    (".", 'expected a plain file name (not "." or ".."), got "."'),
    (".hidden", 'expected a plain file name (not starting with "."), got ".hidden"'),
    (".x.partial-99999-abc", 'expected a plain file name (not starting with ".")'),
    ("", 'expected a plain file name, got ""'),
    ("a\nb", 'expected a plain file name (no control characters), got "a\\nb" (U+000A)'),
    ("a\x00b", 'expected a plain file name (no control characters), got "a\\u0000b" (U+0000)'),
    ("a\u2028b", 'expected a plain file name (no control characters), got "a\\u2028b" (U+2028)'),
    ("x" * (MAX_NAME_BYTES + 1), f"expected a plain file name of at most {MAX_NAME_BYTES} bytes"),
    ("é" * 65, f"expected a plain file name of at most {MAX_NAME_BYTES} bytes"),
    (5, "expected a plain file name (a string), got 5"),
    (None, "expected a plain file name (a string), got null"),
])
def test_names_that_are_not_plain_file_names(name, expected):
    assert file_name_problem(name).startswith(expected)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=140))
def test_any_text_is_a_confined_file_name_or_one_line_of_refusal(tmp_path_factory, name):
    problem = file_name_problem(name)
    if problem is None:
        base = Path("/srv/results")
        joined = base / name
        assert joined.parent == base and joined.name == name   # exactly one component, inside
        assert os.path.normpath(joined) == str(joined)
        name.encode("utf-8")
    else:
        assert len(problem.splitlines()) == 1 and problem.isprintable()


def test_ids():
    assert id_problem("L1") is None and id_problem("H1->R2 (a)") is None
    assert id_problem("L1\nerror: forged line") == (
        'expected an id without control characters, got "L1\\nerror: forged line" (U+000A)')
    assert id_problem("") == 'expected a non-empty string, got ""'
    assert id_problem(5) == "expected a non-empty string, got 5"
    assert id_problem("x" * 256) == "expected an id of at most 255 characters, got 256 characters"


def test_counts():
    assert count_problem(10, 1, 10) is None
    assert count_problem(11, 1, 10) == "expected an integer from 1 to 10, got 11"
    assert count_problem(1e9, 1, 10, "a count") == "expected a count from 1 to 10, got 1000000000.0"
    assert count_problem(True, 1, 10) == "expected an integer from 1 to 10, got true"
    assert count_problem(0, 1, 10) is not None and count_problem("3", 1, 10) is not None


# -- reading files --------------------------------------------------------------------------------

def test_reads_plain_json(tmp_path):
    label, data = read_json(write(tmp_path, '\ufeff{"a": [1, 2.5, "x", null, true]}'))
    assert data == {"a": [1, 2.5, "x", None, True]} and label == str(tmp_path / "in.json")


def test_missing_file_and_directory(tmp_path):
    assert error_of(tmp_path / "nope.json").endswith("cannot read file: No such file or directory")
    (tmp_path / "d.json").mkdir()
    assert error_of(tmp_path / "d.json").endswith("cannot read file: it is a directory")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
def test_a_named_pipe_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "pipe.json")
    assert error_of(tmp_path / "pipe.json").endswith("cannot read file: not a regular file")


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    path = tmp_path / "huge.json"
    with open(path, "wb") as handle:          # sparse: no disk used, nothing to read
        handle.truncate(MAX_FILE_BYTES + 1)

    def never(*args, **kwargs):
        raise AssertionError("the file was opened")
    monkeypatch.setattr(validation, "open", never, raising=False)
    tracemalloc.start()
    try:
        message = error_of(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert message.endswith(f"file too large: {MAX_FILE_BYTES + 1} bytes; at most "
                            f"{MAX_FILE_BYTES} bytes (32 MiB) are read")
    assert peak < 1_000_000


def test_the_size_limit_is_one_constant(tmp_path, monkeypatch):
    path = write(tmp_path, json.dumps({"a": "x" * 100}))
    read_json(path)
    monkeypatch.setattr(validation, "MAX_FILE_BYTES", 50)
    assert error_of(path).endswith("file too large: 109 bytes; at most 50 bytes are read")


def test_invalid_utf8_says_where(tmp_path):
    message = error_of(write(tmp_path, b'{\n  "a": "ok",\n  "b": "\xff"\n}'))
    assert message.endswith("not valid UTF-8: byte 0xff at line 3, column 9 (byte offset 23)")


def test_invalid_json_says_where(tmp_path):
    message = error_of(write(tmp_path, '{\n  "a": 1\n  "b": 2\n}'))
    assert message.endswith("not valid JSON: Expecting ',' delimiter at line 3, column 3")


@pytest.mark.parametrize("opening", ["[", '{"a": ', '[{"a": '])
def test_very_deep_nesting_is_one_line_not_a_recursion_error(tmp_path, opening):
    message = error_of(write(tmp_path, opening * 100_000))
    assert f"nested deeper than {MAX_DEPTH} levels at line 1, column" in message


def test_nesting_limit_is_exact(tmp_path):
    deepest = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    read_json(write(tmp_path, deepest))
    message = error_of(write(tmp_path, "[" + deepest + "]"))
    assert message.endswith(f"nested deeper than {MAX_DEPTH} levels")


def test_integers_have_at_most_the_digit_limit(tmp_path):
    assert read_json(write(tmp_path, f"[{'9' * MAX_INT_DIGITS}, -{'9' * MAX_INT_DIGITS}]"))[1][0] \
        == int("9" * MAX_INT_DIGITS)
    message = error_of(write(tmp_path, '{"a": [1,\n  ' + "9" * 5001 + "]}"))
    assert message.endswith("integer with 5001 digits at line 2, column 3; at most 20 digits are "
                            "allowed")
    message = error_of(write(tmp_path, '{"a": "123456789012345678901", "b": -123456789012345678901}'))
    assert message.endswith("integer with 21 digits at line 1, column 37; at most 20 digits are "
                            "allowed")


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers(tmp_path, literal):
    message = error_of(write(tmp_path, f'{{"a": {literal}}}'))
    assert "not valid JSON" in message and literal.lstrip("-") in message


def test_duplicate_keys_name_the_key_and_where(tmp_path):
    message = error_of(write(tmp_path, '{"a": {"b": [{"k": 1, "k": 2}]}}'))
    assert message.endswith('a.b[0]: duplicate field "k"')
    message = error_of(write(tmp_path, '{"x\\ny": {"k": 1, "k": 2}}'))
    assert message.endswith('["x\\ny"]: duplicate field "k"')


def test_jsonpickle_tags_anywhere(tmp_path):
    message = error_of(write(tmp_path, '{"a": [{"py/object": "os.system"}]}'), kind="sweep files")
    assert message.endswith('a[0]: jsonpickle tag "py/object" is not allowed; sweep files are plain '
                            'JSON data')


def test_lists_and_objects_over_the_entry_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(validation, "MAX_ITEMS", 3)
    read_json(write(tmp_path, '{"a": [1, 2, 3], "b": {"x": 1, "y": 2, "z": 3}}'))
    message = error_of(write(tmp_path, '{"a": {"l": [1, 2, 3, 4]}}'))
    assert message.endswith("a.l: list of 4 entries; at most 3 are allowed")
    message = error_of(write(tmp_path, '{"a": 1, "b": 2, "c": 3, "d": 4}'))
    assert message.endswith("top level: object of 4 fields; at most 3 are allowed")


def test_strings_over_the_length_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(validation, "MAX_STRING_CHARS", 5)
    read_json(write(tmp_path, '{"abcde": "12345"}'))
    assert error_of(write(tmp_path, '{"a": ["123456"]}')).endswith(
        "a[0]: string of 6 characters; at most 5 are allowed")
    assert error_of(write(tmp_path, '{"abcdef": 1}')).endswith(
        "top level: field name of 6 characters; at most 5 are allowed")


def test_a_label_with_a_newline_stays_on_one_line(tmp_path):
    path = write(tmp_path, "[1,", name="a\nerror: forged line.json")
    with pytest.raises(InputError) as info:
        read_json(path)
    assert len(str(info.value).splitlines()) == 1 and "a\\nerror: forged line.json" in str(info.value)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200) | st.text(alphabet='[]{}":,0123456789.eE-+ntrufalsNIy\\u \n',
                                          max_size=200).map(str.encode))
def test_any_bytes_parse_or_give_one_line(tmp_path_factory, content):
    path = tmp_path_factory.mktemp("any") / "x.json"
    path.write_bytes(content)
    try:
        read_json(path)
    except InputError as exc:
        message = str(exc)
        assert len(message.splitlines()) == 1 and message.startswith(f"{path}: ")


# -- dicts built in Python ------------------------------------------------------------------------

def test_check_plain_on_python_data():
    check_plain("<dict>", {"a": [1, 2.0, "x", None, True, (1, 2)]})
    with pytest.raises(InputError, match=r"^<dict>: a\[0\]: expected plain JSON data, got a set$"):
        check_plain("<dict>", {"a": [{1}]})
    with pytest.raises(InputError, match="field names must be strings, got 1"):
        check_plain("<dict>", {1: 2})
    with pytest.raises(InputError, match="integer with more than 20 digits"):
        check_plain("<dict>", {"a": 10 ** 5000})
    deep = []
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(InputError, match=f"nested deeper than {MAX_DEPTH} levels"):
        check_plain("<dict>", {"a": deep})


def test_parse_json_alone():
    assert parse_json("t", '{"a": 1}') == {"a": 1}
    with pytest.raises(InputError, match="^t: not valid JSON"):
        parse_json("t", "{")


# -- the fast road of valid data ------------------------------------------------------------------

def test_valid_files_take_the_fast_road_to_the_same_data():
    from topologies.generate import fat_tree, random_graph
    shipped = sorted((Path(__file__).resolve().parent.parent / "topologies").glob("**/*.json"))
    texts = [path.read_text(encoding="utf-8") for path in shipped]
    texts += [json.dumps(random_graph(50)), json.dumps(fat_tree(4)),
              '{"a": [-0.0, 1e-300, 99999999999999999999, -99999999999999999999, "x", null]}']
    for text in texts:
        fast = validation._plain_data(text)
        assert fast is not None and fast == validation.parse_json("t", text)
        assert json.dumps(fast) == json.dumps(validation.parse_json("t", text))   # types too


@pytest.mark.parametrize("text", [
    '{"a": 1, "a": 2}', '[{"b": {"c": 1, "c": 1}}]', "[NaN]", "[-Infinity]", "[1e400]",
    "[123456789012345678901]", "[-123456789012345678901]", "[" + "1" * 5000 + "]",
    '{"py/object": "x"}', '"' + "x" * 100_001 + '"',
    '{"' + "k" * 100_001 + '": 1}', "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
    "[" * 100_000, "{", "[1,]",
], ids=["duplicate", "nested-duplicate", "nan", "infinity", "float-range", "long-int",
        "long-negative-int", "huge-int", "jsonpickle", "long-string", "long-key", "deep",
        "too-deep-to-parse", "invalid", "trailing-comma"])
def test_anything_to_report_leaves_the_fast_road(text):
    assert validation._plain_data(text) is None
    with pytest.raises(InputError):
        data = validation.parse_json("t", text)
        validation.check_plain("t", data)


_small_values = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers(-5000, 5000)
    | st.text(max_size=5) | st.sampled_from(["py/x", "ab"]),
    lambda inner: st.lists(inner, max_size=5) | st.tuples(inner)
    | st.dictionaries(st.text(max_size=5) | st.sampled_from(["py/object", "a"]) | st.integers(0, 2),
                      inner, max_size=5),
    max_leaves=30)


@given(_small_values)
@settings(max_examples=300)
def test_the_fast_road_passes_only_what_the_full_check_passes(value):
    """`_within_limits` (the one cheaper pass) says the same rules as `check_plain`'s walk: with
    small limits, whatever it passes, the walk (run on its own) passes too."""
    with pytest.MonkeyPatch.context() as patch:
        for name, limit in (("MAX_DEPTH", 3), ("MAX_ITEMS", 3), ("MAX_STRING_CHARS", 3),
                            ("_INT_LIMIT", 1000)):
            patch.setattr(validation, name, limit)
        passed = validation._within_limits(value)
        patch.setattr(validation, "_within_limits", lambda data: False)
        if passed:
            validation.check_plain("t", value)      # raises on anything to report
