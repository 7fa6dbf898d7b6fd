"""Link events: a link going down or up at a time (docs/topology-format.md, "Link events")."""
from __future__ import annotations

from topologies.load_fields import (
    NON_NEGATIVE,
    Where,
    as_list,
    check_fields,
    choice,
    number,
    seconds,
    unknown,
)
from topologies.spec import LINK_ACTIONS, LinkEventSpec
from topologies.validation import quote, show

EVENT_FIELDS = ("at_s", "link", "action")


def _event(where: Where, item, link_ids: dict) -> LinkEventSpec:
    if not isinstance(item, dict):
        raise where.error(f"expected an event object, got {show(item)}")
    check_fields(where, item, EVENT_FIELDS, EVENT_FIELDS)
    at_s = number(where, "at_s", item["at_s"], NON_NEGATIVE)
    link = item["link"]
    if not isinstance(link, str):
        raise where.field_error("link", f"expected a link id, got {show(link)}")
    if link not in link_ids:
        raise where.field_error("link", unknown("link", link, link_ids, list_known=False))
    action = choice(where, "action", item["action"], LINK_ACTIONS)
    return LinkEventSpec(at_s=at_s, link=link, action=action)


def read_events(top: Where, data: dict, links: list) -> list:
    """The link events sorted by (time, file order), each link alternating down, up, down, ..."""
    items = as_list(top, "events", data.get("events", []), "a list of event objects")
    if not items:
        return []           # (without the tables of every link, a large network's thousands)
    link_ids = {link.id: None for link in links}
    events = [_event(Where(top.source, f"events[{index}]"), item, link_ids)
              for index, item in enumerate(items)]
    first_at: dict = {}   # (link id, time) -> index of its first event
    for index, event in enumerate(events):
        previous = first_at.setdefault((event.link, event.at_s), index)
        if previous != index:
            raise Where(top.source, f"events[{index}]").field_error(
                "at_s", f"link {quote(event.link)} already has an event at "
                        f"{seconds(event.at_s)} s (events[{previous}])")
    order = sorted(range(len(events)), key=lambda index: events[index].at_s)   # stable: file order
    state = {link_id: "up" for link_id in link_ids}   # every link starts up
    for index in order:
        event = events[index]
        if event.action == state[event.link]:
            raise Where(top.source, f"events[{index}]").field_error(
                "action", f"link {quote(event.link)} is already {event.action} at "
                          f"{seconds(event.at_s)} s")
        state[event.link] = event.action
    return [events[index] for index in order]


