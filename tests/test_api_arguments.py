"""Bad arguments of the Python API are refused at its boundary, in one line naming the argument
and what was expected, with the exception the docs give for that function (docs/notebook.md,
"Bad arguments"): RunError for `simulate`'s, TopologyError for `load_topology`'s, KeyError
listing the tables for a table name. Before (acceptance test z17, finding 4) a string duration or
interval ended in a TypeError from a comparison inside `run_problem`, a negative stall timeout
was taken, a misspelt stack was a plain ValueError nine frames deep in flows/linux_stack.py, and
`frame("flowz")` a bare KeyError: 'flowz'."""
from __future__ import annotations

import numpy as np
import pytest

from netsim import RunError, TopologyError, load_topology, simulate


@pytest.fixture
def spec(dumbbell):
    return load_topology(dumbbell(1, total_mb=0.05))


@pytest.fixture(scope="module")
def results():
    """A short run: no workloads, so no fct.csv; from Python, so no predictions.csv."""
    data = {"hosts": ["A", "B"],
            "links": [{"id": "L", "ends": ["A", "B"], "rate_mbps": 10, "delay_ms": 5,
                       "buffer_kb": 50}],
            "flows": [{"id": "F1", "src": "A", "dst": "B", "data_mb": 0.05}]}
    with simulate(load_topology(data)) as results:
        yield results


@pytest.mark.parametrize("options, message", [
    ({"duration_s": "5"}, "duration_s: expected a positive number of seconds, got '5'"),
    ({"interval_s": "0.1"}, "interval_s: expected a positive number of seconds, got '0.1'"),
    ({"duration_s": True}, "duration_s: expected a positive number of seconds, got True"),
    ({"interval_s": None}, "interval_s: expected a positive number of seconds, got None"),
    ({"duration_s": [5]}, "duration_s: expected a positive number of seconds, got [5]"),
    ({"duration_s": -1}, "duration_s: expected a positive number of seconds, got -1"),
    ({"interval_s": float("nan")}, "interval_s: expected a positive number of seconds, got nan"),
    ({"stall_timeout_s": -1}, "stall_timeout_s: expected a positive number of seconds, got -1"),
    ({"stall_timeout_s": 0}, "stall_timeout_s: expected a positive number of seconds, got 0"),
    ({"stall_timeout_s": "60"},
     "stall_timeout_s: expected a positive number of seconds, got '60'"),
    ({"stall_timeout_s": float("nan")},
     "stall_timeout_s: expected a positive number of seconds, got nan"),
    ({"stall_timeout_s": float("inf")},
     "stall_timeout_s: expected a time from 1e-09 s to 1e+06 s, got inf"),
    ({"stall_timeout_s": 2e6},
     "stall_timeout_s: expected a time from 1e-09 s to 1e+06 s, got 2000000.0"),
])
def test_a_bad_time_argument_of_simulate_is_a_run_error(spec, options, message):
    with pytest.raises(RunError) as raised:
        simulate(spec, **options)
    assert str(raised.value) == message


def test_numbers_of_every_kind_are_still_taken(spec):
    """numpy's numbers (a value taken from an array) are numbers: only non-numbers are refused."""
    with simulate(spec, duration_s=np.int64(2), interval_s=np.float64(0.5),
                  stall_timeout_s=np.float32(30)) as results:
        assert results.summary["stop_reason"] == "completed"


def test_numpy_numbers_run_as_pythons(spec):
    """A numpy seed was refused; a float16 interval ran, its rates computed in float16: NaN
    (acceptance test Z18). They run as the same Python numbers do."""
    with simulate(spec, seed=np.int64(3), interval_s=np.float16(0.1)) as mine, \
            simulate(spec, seed=3, interval_s=float(np.float16(0.1))) as plain:
        assert mine.summary["seed"] == 3
        assert mine.frame("links").equals(plain.frame("links"))
        assert not mine.frame("links")["rate_mbps"].isna().any()


@pytest.mark.parametrize("stack, message", [
    ("lnux", 'stack: expected "classic" or "linux", got "lnux" (did you mean "linux"?)'),
    ("Linux", 'stack: expected "classic" or "linux", got "Linux" (did you mean "linux"?)'),
    (3, 'stack: expected "classic" or "linux", got 3'),
    ("", 'stack: expected "classic" or "linux", got ""'),
])
def test_a_bad_stack_of_load_topology_is_a_topology_error(dumbbell, stack, message):
    with pytest.raises(TopologyError) as raised:
        load_topology(dumbbell(1), stack=stack)
    assert str(raised.value) == message
    with pytest.raises(TopologyError) as raised:       # (checked before the file is read)
        load_topology("no such file.json", stack=stack)
    assert str(raised.value) == message


def test_a_known_stack_is_every_flows(dumbbell):
    spec = load_topology(dumbbell(2), stack="linux")
    assert {flow.transport.stack for flow in spec.flows} == {"linux"}


ALL_TABLES = "links, flows, hosts, routes, predictions, fct"


@pytest.mark.parametrize("name", ["flowz", "link", None, 3, ["flows"]])
def test_a_table_name_that_is_none_lists_the_tables(results, name):
    """The words of `ResultSet.frame` for a results directory (plot_tool.results)."""
    for read in (results.frame, results.table, results.trace_chunks):
        with pytest.raises(KeyError) as raised:
            read(name)
        assert raised.value.args == (f"no table {name!r}; tables: {ALL_TABLES}",)
    with pytest.raises(KeyError) as raised:
        results.trace(name, "F1", "window_pkts")
    assert raised.value.args == (f"no table {name!r}; tables: links, flows, hosts",)


def test_a_table_the_run_did_not_write_is_none_as_for_a_results_directory(results):
    assert results.frame("predictions") is None and results.frame("fct") is None
    assert len(results.frame("flows")) == len(results.table("flows")["time_s"])


def test_the_lines_docs_notebook_quotes_are_the_programs(dumbbell, spec, results, root):
    text = " ".join((root / "docs" / "notebook.md").read_text(encoding="utf-8").split())
    lines = []
    for call, error in ((lambda: load_topology(dumbbell(1), stack="lnux"), TopologyError),
                        (lambda: simulate(spec, duration_s="5"), RunError),
                        (lambda: results.frame("flowz"), KeyError)):
        with pytest.raises(error) as raised:
            call()
        lines.append(raised.value.args[0])
    for line in lines:
        assert f"`{line}`" in text
