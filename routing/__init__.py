"""Routing: filling router forwarding tables (static shortest paths; dynamic protocols plug in here)."""
from routing.static import install_static_routes, next_hops

__all__ = ["install_static_routes", "next_hops"]
