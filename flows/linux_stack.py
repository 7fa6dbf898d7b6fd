"""The transport stacks: ``"classic"`` (the default) and ``"linux"``, and the options each sets.

A flow's transport settings (a topology's `transport` object, `topologies.spec.TransportSpec`)
name a `stack`; every mechanism below left unset (None) takes that stack's default, and one set
explicitly overrides it, so each mechanism can also be used alone on the classic stack (e.g.
``"rack": true``). `stack_options` resolves them once per flow into a `StackOptions`.

===================  ===========  =========  ====================================================
option               classic      linux      what it follows
===================  ===========  =========  ====================================================
``sack``             algorithm's  True       SACK-based recovery for every algorithm (Linux
                     `recovery`              runs every tcp_congestion_ops over SACK); implied
                                             by rack, tlp, prr and undo
``rack``             False        True       RFC 8985 RACK loss detection (flows/rack.py;
                                             Linux tcp_rack_detect_loss)
``tlp``              False        True       RFC 8985 §7 tail loss probes (Linux
                                             tcp_schedule_loss_probe / tcp_send_loss_probe)
``prr``              False        True       RFC 6937 PRR-SSRB (flows/prr.py; Linux
                                             tcp_cwnd_reduction), and CWR on ECN
``undo``             False        True       undo of spurious retransmissions (flows/undo.py;
                                             Linux tcp_try_undo_recovery / _loss / _dsack)
``integer_window``   False        True       send while packets in flight < floor(cwnd)
                                             (Linux tcp_cwnd_test)
``linux_rto``        False        True       Linux RTO (flows/rtt.py `LinuxRttEstimator`;
                                             tcp_rtt_estimator, tcp_set_rto)
``linux_acks``       False        True       Linux delayed ACKs (flows/receiver.py
                                             `LinuxReceiver`; tcp_event_data_recv,
                                             __tcp_ack_snd_check, tcp_send_delayed_ack)
``rwnd_pkts``        rwnd_kb or   rwnd_kb or a fixed receive window (see below)
                     none         3 MB
===================  ===========  =========  ====================================================

The Linux stack's numeric defaults (applied by the topology loader to fields a file leaves
unset): initial window 10 packets (RFC 6928, Linux TCP_INIT_CWND), RTO initial 1 s
(TCP_TIMEOUT_INIT), min 200 ms (TCP_RTO_MIN), max 120 s (TCP_RTO_MAX).

Receive window: ``rwnd_kb`` (kB of 1000 bytes) bounds the packets sent and not yet cumulatively
acknowledged, on every stack; the receiving application is taken to read at once, so the
advertised window is constant. On the Linux stack without ``rwnd_kb`` the bound is Linux's
autotuning ceiling: tcp_rmem[2] = 6 MB of receive buffer, of which half is advertised as window
(the default scaling of tcp_win_from_space, tcp_adv_win_scale = 1), 3 MB. The autotuning ramp
(tcp_rcv_space_adjust doubles the buffer each round trip ahead of the sender) is not modelled.
"""
from __future__ import annotations

import math

STACKS = ("classic", "linux")
CLASSIC = "classic"
LINUX = "linux"

# Linux's numeric defaults (include/net/tcp.h)
LINUX_INITIAL_CWND_PKTS = 10.0     # TCP_INIT_CWND (RFC 6928)
LINUX_INITIAL_RTO_S = 1.0          # TCP_TIMEOUT_INIT
LINUX_MIN_RTO_S = 0.2              # TCP_RTO_MIN
LINUX_MAX_RTO_S = 120.0            # TCP_RTO_MAX
LINUX_RMEM_MAX_BYTES = 6 * 1024 * 1024   # net.ipv4.tcp_rmem[2] default
LINUX_WINDOW_SHARE = 0.5           # tcp_win_from_space with tcp_adv_win_scale = 1
RWND_BYTES_PER_KB = 1000.0         # rwnd_kb counts kB of 1000 bytes, whatever the units

# the numeric TransportSpec fields a stack gives defaults to, with the Linux values
LINUX_NUMERIC_DEFAULTS = {
    "initial_cwnd_pkts": LINUX_INITIAL_CWND_PKTS,
    "initial_rto_s": LINUX_INITIAL_RTO_S,
    "min_rto_s": LINUX_MIN_RTO_S,
    "max_rto_s": LINUX_MAX_RTO_S,
}

# the on/off mechanisms (TransportSpec fields; None: the stack's default)
MECHANISMS = ("sack", "rack", "tlp", "prr", "undo", "integer_window", "linux_rto", "linux_acks")


class StackOptions:
    """The mechanisms one flow's transport runs, resolved from its settings and stack."""

    __slots__ = ("integer_window", "linux_acks", "linux_rto", "prr", "rack", "rwnd_pkts", "sack",
                 "stack", "tlp", "undo")

    def __init__(self, stack: str = CLASSIC, *, sack: bool = False, rack: bool = False,
                 tlp: bool = False, prr: bool = False, undo: bool = False,
                 integer_window: bool = False, linux_rto: bool = False,
                 linux_acks: bool = False, rwnd_pkts: float = math.inf):
        self.stack = stack
        self.sack = sack
        self.rack = rack
        self.tlp = tlp
        self.prr = prr
        self.undo = undo
        self.integer_window = integer_window
        self.linux_rto = linux_rto
        self.linux_acks = linux_acks
        self.rwnd_pkts = rwnd_pkts

    @property
    def extended(self) -> bool:
        """Whether the flow needs the extended sender (flows/linux_sender.py): any of SACK for
        every algorithm, RACK, TLP, PRR or undo."""
        return self.sack or self.rack or self.tlp or self.prr or self.undo

    @property
    def window_bounded(self) -> bool:
        """Whether the window is an integer or bounded by a receive window."""
        return self.integer_window or self.rwnd_pkts < math.inf

    def __repr__(self) -> str:
        on = [name for name in MECHANISMS if getattr(self, name)]
        return f"StackOptions({self.stack!r}, {'+'.join(on) or 'none'}, rwnd={self.rwnd_pkts})"


def stack_options(transport, packet_bytes: int) -> StackOptions:
    """The options of a flow whose transport settings are `transport` (a TransportSpec, or any
    object: missing attributes read as unset) and whose data packets are `packet_bytes`."""
    stack = getattr(transport, "stack", None) or CLASSIC
    if stack not in STACKS:
        raise ValueError(f"transport stack must be one of {', '.join(STACKS)}, got {stack!r}")
    linux = stack == LINUX
    chosen = {}
    for name in MECHANISMS:
        value = getattr(transport, name, None)
        chosen[name] = linux if value is None else bool(value)
    if chosen["rack"] or chosen["tlp"] or chosen["prr"] or chosen["undo"]:
        chosen["sack"] = True           # they run on the SACK-based sender only
    rwnd_kb = getattr(transport, "rwnd_kb", None)
    if rwnd_kb is not None:
        rwnd_pkts = math.floor(rwnd_kb * RWND_BYTES_PER_KB / packet_bytes)
        if rwnd_pkts < 1:
            raise ValueError(f"rwnd_kb {rwnd_kb} is less than one {packet_bytes}-byte packet")
    elif linux:
        rwnd_pkts = math.floor(LINUX_RMEM_MAX_BYTES * LINUX_WINDOW_SHARE / packet_bytes)
    else:
        rwnd_pkts = math.inf
    return StackOptions(stack, rwnd_pkts=rwnd_pkts, **chosen)


# the numeric TransportSpec fields a stack gives defaults to, per stack
CLASSIC_NUMERIC_DEFAULTS = {
    "initial_cwnd_pkts": 1.0,        # RFC 5681 (the 2015 reference's one packet)
    "initial_rto_s": 1.0,            # RFC 6298 (2.1)
    "min_rto_s": 1.0,                # RFC 6298 (2.4)
    "max_rto_s": 60.0,               # RFC 6298 (2.5)
}


def numeric_defaults(stack: str) -> dict[str, float]:
    """The numeric transport defaults of `stack`."""
    if stack == LINUX:
        return LINUX_NUMERIC_DEFAULTS
    if stack == CLASSIC:
        return CLASSIC_NUMERIC_DEFAULTS
    raise ValueError(f"transport stack must be one of {', '.join(STACKS)}, got {stack!r}")
