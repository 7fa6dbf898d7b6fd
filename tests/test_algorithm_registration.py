"""What the algorithm interface checks and declares (flows/congestion.py): registration refuses a
class that moves no window or misspells a hook, with one did-you-mean line; plugin classes work
without __slots__; the stand-in flow offers exactly the FlowView protocol; states, events,
recovery modes and ECN echoes are str enums; every built-in declares its facts."""
from __future__ import annotations

import math

import pytest

import flows
from flows import ALGORITHMS, register_algorithm
from flows.congestion import (
    CWR,
    GROWTH_HOOKS,
    LOSS,
    OPEN,
    RECOVERY,
    CaEvent,
    CaState,
    CongestionControl,
    EcnEcho,
    FlowView,
    RecoveryMode,
    check_algorithm_class,
)
from flows.testing import StandInFlow


@pytest.fixture(autouse=True)
def _clean_registry():
    before = dict(ALGORITHMS)
    yield
    ALGORITHMS.clear()
    ALGORITHMS.update(before)


def protocol_members(protocol) -> set:
    names = set(getattr(protocol, "__annotations__", {}))
    names |= {n for n, v in vars(protocol).items() if not n.startswith("_") and
              (callable(v) or isinstance(v, property))}
    return names


# -- registration ------------------------------------------------------------------------------
def test_a_class_that_moves_no_window_is_refused_with_one_line():
    class Still(CongestionControl):
        name = "still"

        def ssthresh(self):
            return 2.0

    with pytest.raises(ValueError) as caught:
        register_algorithm(Still)
    message = str(caught.value)
    assert message == ("class Still overrides none of the hooks that move the window (on_ack, "
                       "on_rate_sample, on_rtt, tick): its window would never change")
    assert "\n" not in message and "still" not in ALGORITHMS


@pytest.mark.parametrize("hook", GROWTH_HOOKS)
def test_any_growth_hook_is_enough(hook):
    cls = type("Mover", (CongestionControl,), {"name": f"mover_{hook}", hook: lambda self, *a: None})
    register_algorithm(cls)
    assert ALGORITHMS[f"mover_{hook}"] is cls


def test_an_inherited_growth_hook_counts():
    class MyReno(flows.Reno.__mro__[0]):      # Reno's on_ack comes from Tahoe
        name = "my_reno"

    register_algorithm(MyReno)
    assert ALGORITHMS["my_reno"] is MyReno


@pytest.mark.parametrize("misspelt, meant", [
    ("on_acks", "on_ack"), ("on_rate_samples", "on_rate_sample"), ("ssthreshold", "ssthresh"),
    ("undo_cwd", "undo_cwnd"), ("cwnd_events", "cwnd_event"), ("PARAMETER", "PARAMETERS"),
    ("tick_interval", "tick_interval_s"),
])
def test_a_misspelt_hook_is_named_with_a_did_you_mean(misspelt, meant):
    body = {"name": "typo", "on_ack": CongestionControl.standard_growth,
            misspelt: (lambda self, *a: None) if misspelt.islower() else {}}
    cls = type("Typo", (CongestionControl,), body)
    with pytest.raises(ValueError) as caught:
        register_algorithm(cls)
    assert str(caught.value) == (f"class Typo: {misspelt} is not part of the algorithm interface "
                                 f"and would never be used; did you mean {meant}?")
    assert "typo" not in ALGORITHMS


def test_private_and_unrelated_names_are_the_authors_own():
    class Own(CongestionControl):
        name = "own"
        GAIN = 2.0

        def on_ack(self, acked_pkts):
            self._on_acks(acked_pkts)

        def _on_acks(self, acked_pkts):       # private: never mistaken for a hook
            self.flow.cwnd += self.GAIN * acked_pkts / self.flow.cwnd

        def loss_events(self):
            return 0

    assert check_algorithm_class(Own) is None
    register_algorithm(Own)


def test_a_plugin_misspelling_is_one_line_naming_the_file(tmp_path):
    from netsim.plugins import PluginError, load_plugin
    path = tmp_path / "typo.py"
    path.write_text("from flows.congestion import CongestionControl\n\n"
                    "class Typo(CongestionControl):\n    name = 'typo_plugin'\n"
                    "    def on_acks(self, n):\n        self.flow.cwnd += n / self.flow.cwnd\n")
    with pytest.raises(PluginError) as caught:
        load_plugin(path)
    message = str(caught.value)
    assert message.startswith(f"--plugin {path}: class Typo: on_acks is not part")
    assert message.endswith("did you mean on_ack?") and "\n" not in message


@pytest.mark.parametrize("body, expected", [
    ({"on_ack": lambda self: None},
     "on_ack(self) cannot be called as the transport calls on_ack(self, acked_pkts): too many "
     "positional arguments"),
    ({"ssthresh": lambda self, flight: 2.0},
     "ssthresh(self, flight) cannot be called as the transport calls ssthresh(self): missing a "
     "required argument: 'flight'"),
    ({"__init__": lambda self, flow: None},
     "__init__(self, flow) cannot be called as the transport calls __init__(self, flow, params): "
     "too many positional arguments"),
    ({"on_state": staticmethod(lambda new: None)},
     "on_state(new) cannot be called as the transport calls on_state(self, old, new): too many "
     "positional arguments"),
    ({"param_problem": classmethod(lambda cls, name: None)},
     "param_problem(cls, name) cannot be called as the transport calls param_problem(cls, name, "
     "value): too many positional arguments"),
    ({"tick": None}, "tick = None is not a method; the transport calls tick(self)"),
])
def test_a_method_the_transport_cannot_call_is_refused_with_one_line(body, expected):
    cls = type("Sig", (CongestionControl,), {"name": "sig", "on_rtt": lambda self, rtt_s: None,
                                             **body})
    with pytest.raises(ValueError) as caught:
        register_algorithm(cls)
    assert str(caught.value) == f"class Sig: {expected}"


async def _coroutine_on_ack(self, acked_pkts):
    self.flow.cwnd += 1.0


def _generator_on_ack(self, acked_pkts):
    yield acked_pkts


async def _async_generator_tick(self):
    yield None


@pytest.mark.parametrize("body, expected", [
    ({"on_ack": _coroutine_on_ack}, "on_ack is a coroutine function (async def)"),
    ({"on_ack": _generator_on_ack}, "on_ack is a generator (it contains yield)"),
    ({"tick": _async_generator_tick}, "tick is an asynchronous generator"),
])
def test_a_hook_whose_call_runs_none_of_its_body_is_refused(body, expected):
    """An `async def` hook or one containing `yield` passed registration, and the run went on
    with a window that never grew (a warning about a coroutine never awaited, or nothing)."""
    cls = type("Lazy", (CongestionControl,), {"name": "lazy", **body})
    with pytest.raises(ValueError) as caught:
        register_algorithm(cls)
    hook = next(iter(body))
    wanted = "on_ack(self, acked_pkts)" if hook == "on_ack" else "tick(self)"
    assert str(caught.value) == (f"class Lazy: {expected}: calling it runs none of its body; the "
                                 f"transport calls {wanted} and uses what it returns at once, so "
                                 f"write it as a plain def")


def test_methods_that_take_more_than_the_transport_passes_are_accepted():
    class Loose(CongestionControl):
        name = "loose"

        def __init__(self, flow, params=None, extra=1):
            super().__init__(flow, params)

        def on_ack(self, acked_pkts, *more):
            self.standard_growth(acked_pkts)

        def ssthresh(self, *args, **options):
            return 2.0

        @staticmethod
        def on_state(old, new, note=None):
            pass

        @classmethod
        def param_problem(cls, name, value, /):
            return None

    assert check_algorithm_class(Loose) is None


@pytest.mark.parametrize("name", sorted(flows.BUILTIN_ALGORITHMS))
def test_every_built_in_passes_the_checks(name):
    assert check_algorithm_class(ALGORITHMS[name]) is None


# -- plugin classes without __slots__ ----------------------------------------------------------
def test_a_subclass_without_slots_keeps_any_attribute():
    class Counting(CongestionControl):
        name = "counting"

        def __init__(self, flow, params=None):
            super().__init__(flow, params)
            self.acks = 0

        def on_ack(self, acked_pkts):
            self.acks += 1
            self.last = acked_pkts               # an attribute first set in a hook
            self.standard_growth(acked_pkts)

    register_algorithm(Counting)
    flow = StandInFlow(cwnd=2.0, ssthresh=100.0)
    cc = ALGORITHMS["counting"](flow)
    for _ in range(3):
        cc.on_ack(1)
    assert cc.acks == 3 and cc.last == 1 and flow.cwnd == 5.0


def test_a_plugin_file_without_slots_runs_a_simulation(tmp_path):
    from netsim import simulate
    from netsim.plugins import load_plugin
    from topologies import load_topology
    path = tmp_path / "free.py"
    path.write_text("from flows.congestion import CongestionControl\n\n"
                    "class Free(CongestionControl):\n    name = 'free'\n"
                    "    def init(self):\n        self.grown = 0\n"
                    "    def on_ack(self, n):\n        self.grown += n\n"
                    "        self.standard_growth(n)\n"
                    "    def report(self):\n        return {'grown': float(getattr(self, 'grown', 0))}\n")
    assert load_plugin(path) == ["free"]
    spec = load_topology({
        "hosts": ["H1", "H2"], "routers": [],
        "links": [{"id": "L1", "ends": ["H1", "H2"], "rate_mbps": 10, "delay_ms": 5,
                   "buffer_kb": 50}],
        "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 0.5, "start_s": 0,
                   "algorithm": "free"}]})
    result = simulate(spec)
    assert result.summary["flows"]["F1"]["in_order"]


# -- the stand-in flow offers exactly the protocol ---------------------------------------------
def test_the_stand_in_offers_exactly_the_flow_view():
    flow = StandInFlow()
    public = {n for n in dir(flow) if not n.startswith("_")}
    knobs = {"flight", "inflight"}          # what flight_size() and pipe() report
    assert public - knobs == protocol_members(FlowView)
    assert not hasattr(flow, "dupack_threshold")


def test_the_stand_in_refuses_a_misspelt_member():
    flow = StandInFlow()
    with pytest.raises(AttributeError):
        flow.cwdn = 3.0                      # type: ignore[attr-defined]


def test_the_stand_in_selects_the_stack():
    assert StandInFlow().stack == "classic" and StandInFlow(stack="linux").stack == "linux"
    assert not flows.Reno(StandInFlow()).linux and flows.Reno(StandInFlow(stack="linux")).linux


# -- str enums ---------------------------------------------------------------------------------
def test_states_events_and_modes_are_str_enums_that_print_as_their_values():
    assert [s.value for s in CaState] == ["open", "cwr", "recovery", "loss"]
    assert (OPEN, CWR, RECOVERY, LOSS) == tuple(CaState)
    assert OPEN == "open" and f"{RECOVERY}" == "recovery" and str(LOSS) == "loss"
    assert {"recovery": 1}[RECOVERY] == 1 and f"{CWR}" == "cwr"
    assert [e.value for e in CaEvent] == ["tx_start", "cwnd_restart", "enter_cwr",
                                          "complete_cwr", "loss"]
    assert RecoveryMode("sack") is RecoveryMode.SACK and RecoveryMode.NEWRENO == "newreno"
    assert EcnEcho.DCTCP == "dctcp" and str(EcnEcho.CLASSIC) == "classic"


# -- the facts each built-in declares ----------------------------------------------------------
@pytest.mark.parametrize("name, model, echo, needs_ecn, recovery", [
    ("tahoe", "loss", "classic", False, "reno"), ("reno", "loss", "classic", False, "reno"),
    ("newreno", "loss", "classic", False, "newreno"), ("cubic", "cubic", "classic", False, "sack"),
    ("vegas", "delay", "classic", False, "reno"), ("fast", "delay", "classic", False, "sack"),
    ("bbr", "rate", "classic", False, "sack"), ("dctcp", "dctcp", "dctcp", True, "sack"),
])
def test_built_ins_declare_model_echo_and_recovery(name, model, echo, needs_ecn, recovery):
    cls = ALGORITHMS[name]
    assert cls.theory_model == model
    assert cls.ecn_echo == echo and cls.requires_ecn is needs_ecn
    assert cls.recovery == recovery and isinstance(cls.recovery, RecoveryMode)
    assert not hasattr(cls, "ecn_mode")      # the former field, split in two


def test_an_old_plugin_setting_ecn_mode_gets_both_new_fields():
    class Old(CongestionControl):
        name = "old"
        ecn_mode = "dctcp"
        on_ack = CongestionControl.standard_growth

    assert Old.ecn_echo is EcnEcho.DCTCP and Old.requires_ecn


def test_constants_live_in_the_classes():
    assert flows.Cubic.PARAMETERS["C"] == 0.4 and flows.Cubic.PARAMETERS["beta"] == 0.7
    assert flows.Bbr.PARAMETERS["cwnd_gain"] == 2.0 and max(flows.Bbr.GAIN_CYCLE) == 1.25
    assert ALGORITHMS["dctcp"].PARAMETERS["g"] == 1 / 16


# -- the new hooks' defaults -------------------------------------------------------------------
def test_default_undo_is_tcp_reno_undo_cwnd_and_report_is_empty():
    flow = StandInFlow(cwnd=10.0)
    cc = flows.Reno(flow)
    flow.prior_cwnd = 24.0
    assert cc.undo_cwnd() == 24.0
    flow.prior_cwnd = 4.0
    assert cc.undo_cwnd() == 10.0
    assert cc.report() == {} and cc.cwnd_event(CaEvent.TX_START) is None


@pytest.mark.parametrize("name, keys", [
    ("cubic", {"w_max_pkts"}), ("dctcp", {"alpha"}),
    ("bbr", {"btlbw_bps", "min_rtt_s", "pacing_gain", "cwnd_gain"}), ("reno", set()),
])
def test_report_names_are_the_same_before_init_and_after(name, keys):
    for stack in ("classic", "linux"):
        flow = StandInFlow(cwnd=10.0, stack=stack)
        cc = ALGORITHMS[name](flow)
        before = cc.report()
        cc.init()
        flow.srtt = flow.min_rtt = 0.05
        cc.on_rtt(0.05)
        after = cc.report()
        extra = {"extra_acked_pkts"} if name == "bbr" and stack == "linux" else set()
        assert set(before) == set(after) == keys | extra
        assert all(isinstance(v, float) for v in after.values())
    assert math.isnan(flows.Cubic(StandInFlow()).report()["w_max_pkts"])
