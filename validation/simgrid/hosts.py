#!/usr/bin/env python3
"""Writes the hostfile of a SimGrid platform file in topocoll's rank order: its hosts in the
order the file declares them (a flat cluster's or a cabinet's in its radical's order), so
that rank r runs on the same host in SMPI and in topocoll.

Usage: hosts.py PLATFORM.xml > hosts.txt
"""

import sys
import xml.etree.ElementTree as ET


def radical(text):
    for part in text.split(","):
        a, _, b = part.strip().partition("-")
        for r in range(int(a), int(b or a) + 1):
            yield r


def hosts(e):
    tag = e.tag
    if tag == "host":
        yield e.get("id")
    elif tag in ("cluster", "cabinet"):
        for r in radical(e.get("radical")):
            yield f"{e.get('prefix', '')}{r}{e.get('suffix', '')}"
    else:
        for c in e:
            yield from hosts(c)


if __name__ == "__main__":
    for h in hosts(ET.parse(sys.argv[1]).getroot()):
        print(h)
