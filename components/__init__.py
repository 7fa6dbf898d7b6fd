"""Network components: hosts, routers, links with FIFO drop-tail buffers, and packets."""
from components.link import DUPLEX_MODES, Link, LinkDirection, Transmitter
from components.node import Host, Node, Router
from components.packet import ACK, DATA, ROUTING, Packet

__all__ = ["ACK", "DATA", "DUPLEX_MODES", "ROUTING", "Host", "Link", "LinkDirection", "Node", "Packet",
           "Router", "Transmitter"]
