#!/usr/bin/env python3
"""Writes tree networks for `topocoll optimize` as TOML topology files.

  scripts/tree-networks.py racks RACKS HOSTS > racks.toml
      RACKS racks of HOSTS hosts: 125 MB/s host links to a rack switch,
      1.25 GB/s rack uplinks to one core switch, 5 us a hop.
  scripts/tree-networks.py clusters NODES [fast|gigabit|fast-uplink [FAST]] > clusters.toml
      the tree-broadcast paper's clusters of two clusters of NODES dual-CPU
      nodes, the first on Fast Ethernet (`fast`, its Fig. 14) or Gigabit
      (its Fig. 13), with the parameters of docs/treebcast.md (the same
      networks `topocoll reproduce treebcast` builds). `fast-uplink`: as
      `fast`, with the link between the two switches at Fast Ethernet's
      rate too, and Fast Ethernet at FAST bytes/s (default 1.1e7): the
      network that explains the paper's Table 5 (docs/treebcast.md).
"""
import sys

GIGABIT = (1.0e8, 50e-6)
FAST = (1.1e7, 100e-6)
BUS = (4.0e8, 2e-6)


def node(name, switch=False):
    return ['[[node]]', f'name = "{name}"'] + (['kind = "switch"'] if switch else [])


def edge(a, b, bw=None, lat=None, half=False):
    lines = ['[[edge]]', f'a = "{a}"', f'b = "{b}"']
    if bw is not None:
        lines += [f'bandwidth = {bw:g}', f'latency = {lat:g}']
    if half:
        lines.append('duplex = "half"')
    return lines


def racks(n_racks, hosts):
    out = ['kind = "tree"', 'bandwidth = 1.25e8', 'latency = 5e-6'] + node('core', True)
    for r in range(n_racks):
        out += node(f'rack{r}', True) + edge(f'rack{r}', 'core', 1.25e9, 5e-6)
        for h in range(hosts):
            out += node(f'h{r}_{h}') + edge(f'h{r}_{h}', f'rack{r}')
    return out


def clusters(nodes, first, uplink=None):
    out = ['kind = "tree"', f'bandwidth = {GIGABIT[0]:g}', f'latency = {GIGABIT[1]:g}']
    out += node('switchA', True) + node('switchB', True)
    out += edge('switchA', 'switchB', *uplink) if uplink else edge('switchA', 'switchB')
    for c, sw, net in (('a', 'switchA', first), ('b', 'switchB', GIGABIT)):
        for k in range(nodes):
            bus = f'{c}{k}'
            out += node(bus, True)
            for cpu in range(2):
                out += node(f'{bus}.cpu{cpu}') + edge(f'{bus}.cpu{cpu}', bus, *BUS, half=True)
            out += edge(bus, sw, *net)
    return out


def main(args):
    if len(args) == 3 and args[0] == 'racks':
        lines = racks(int(args[1]), int(args[2]))
    elif len(args) in (2, 3, 4) and args[0] == 'clusters':
        kind = args[2] if len(args) >= 3 else 'fast'
        if kind not in ('fast', 'gigabit', 'fast-uplink') or (len(args) == 4 and kind != 'fast-uplink'):
            sys.exit("tree-networks.py: clusters takes 'fast', 'gigabit' or 'fast-uplink [FAST]'")
        if kind == 'fast-uplink':
            fast = (float(args[3]) if len(args) == 4 else FAST[0], FAST[1])
            lines = clusters(int(args[1]), fast, uplink=fast)
        else:
            lines = clusters(int(args[1]), FAST if kind == 'fast' else GIGABIT)
    else:
        sys.exit(__doc__.strip())
    print('\n'.join(lines))


if __name__ == '__main__':
    main(sys.argv[1:])
