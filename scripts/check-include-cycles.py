#!/usr/bin/env python3
"""Checks the include graph of treetrav's public headers (include/treetrav).

  scripts/check-include-cycles.py [--root DIR] [--layers] [--kokkos-free]

Fails (exit 1) and prints what it found when
  * a header includes itself through other headers: each cycle as a path
    a.hpp -> b.hpp -> a.hpp (one per header on a cycle);
  * the folders include each other in a cycle (trees -> nbody -> trees), a
    folder's detail/ counted as the folder: the layering the README draws;
  * a header has an #include after its first line of code (anything but
    comments, blank lines and preprocessor lines): "no include at the end of a
    header", the usual way a cycle is papered over.
Edges: #include <treetrav/...> resolved under the root's parent, and quoted
includes resolved next to the including file, then under the root's parent.
Includes of files that are not there (the generated treetrav/version.hpp,
other libraries) are no edges. --layers prints the folder graph as well.
--kokkos-free prints, one a line, the headers that reach no Kokkos header
through their includes (tests/headers compiles them without its precompiled
Kokkos_Core.hpp, which would stand in for a missing include), and checks nothing.
Standard library only; registered as the ctest include_cycles.
"""

import argparse
import collections
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def strip_comments(text):
    """The text with comments blanked out (line structure kept); strings kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '/' and i + 1 < n and text[i + 1] == '/':
            j = text.find('\n', i)
            i = n if j < 0 else j
        elif c == '/' and i + 1 < n and text[i + 1] == '*':
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(''.join('\n' if ch == '\n' else ' ' for ch in text[i:j]))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def scan(path):
    """(includes, late): includes as (line, kind, target); late: includes after code."""
    with open(path, encoding='utf-8') as f:
        lines = strip_comments(f.read()).split('\n')
    includes, late = [], []
    first_code = None
    continued = False  # the previous line was a preprocessor line ending in '\'
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        directive = continued or stripped.startswith('#')
        continued = directive and stripped.endswith('\\')
        match = INCLUDE.match(line)
        if match:
            includes.append((number, match.group(1), match.group(2)))
            if first_code is not None:
                late.append((number, match.group(2), first_code))
        elif stripped and not directive and first_code is None:
            first_code = number
    return includes, late


def folder(header):
    """treetrav/trees/detail/x.hpp -> trees; treetrav/x.hpp -> (top)."""
    parts = header.split('/')[1:-1]
    parts = [p for p in parts if p != 'detail']
    return parts[0] if parts else '(top)'


def cycle_through(graph, start, members):
    """A shortest cycle start -> ... -> start inside `members`, or None."""
    parent = {start: None}
    queue = collections.deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(graph[node]):
            if nxt == start:
                path = [node]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])
                return path[::-1] + [start]
            if nxt in members and nxt not in parent:
                parent[nxt] = node
                queue.append(nxt)
    return None


def strongly_connected(graph):
    """Tarjan's components (iterative), each a sorted list."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def cycles(graph):
    """One shortest cycle through each node that lies on one, rotations merged."""
    found, seen = [], set()
    for component in strongly_connected(graph):
        members = set(component)
        if len(component) == 1 and component[0] not in graph[component[0]]:
            continue
        for node in component:
            path = cycle_through(graph, node, members)
            if path is None:
                continue
            ring = path[:-1]
            smallest = ring.index(min(ring))
            key = tuple(ring[smallest:] + ring[:smallest])
            if key not in seen:
                seen.add(key)
                found.append(list(key) + [key[0]])
    return found


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--root', default=os.path.join(here, '..', 'include', 'treetrav'),
                        help='the headers\' folder (default: include/treetrav)')
    parser.add_argument('--layers', action='store_true', help='print which folder includes which')
    parser.add_argument('--kokkos-free', action='store_true',
                        help='print the headers that reach no Kokkos header, and check nothing')
    args = parser.parse_args()
    root = os.path.normpath(args.root)
    base = os.path.dirname(root)  # #include <treetrav/...> is relative to this

    headers = {}
    for directory, _, files in os.walk(root):
        for name in files:
            if name.endswith(('.hpp', '.h', '.hh', '.hxx', '.cuh')):
                path = os.path.join(directory, name)
                headers[os.path.relpath(path, base).replace(os.sep, '/')] = path
    if not headers:
        print(f'check-include-cycles: no headers under {root}', file=sys.stderr)
        return 2

    graph = {h: set() for h in headers}
    late = []
    kokkos = set()  # headers that include a Kokkos header themselves
    for header, path in sorted(headers.items()):
        includes, late_here = scan(path)
        for number, target, first_code in late_here:
            late.append(f'{header}:{number}: #include <{target}> after the code that starts at line {first_code}')
        for _, kind, target in includes:
            if os.path.basename(target).startswith('Kokkos'):
                kokkos.add(header)
            candidates = [os.path.normpath(os.path.join(os.path.dirname(header), target)).replace(os.sep, '/')] \
                if kind == '"' else []
            candidates.append(os.path.normpath(target).replace(os.sep, '/'))
            for candidate in candidates:
                if candidate in headers:
                    graph[header].add(candidate)
                    break

    if args.kokkos_free:
        for header in sorted(headers):
            reached, todo = {header}, [header]
            while todo:
                for target in graph[todo.pop()] - reached:
                    reached.add(target)
                    todo.append(target)
            if not reached & kokkos:
                print(header)
        return 0

    layers = collections.defaultdict(set)
    for header, targets in graph.items():
        for target in targets:
            if folder(header) != folder(target):
                layers[folder(header)].add(folder(target))
    folders = {folder(h) for h in headers}
    folder_graph = {f: layers[f] for f in folders}

    header_cycles = cycles(graph)
    folder_cycles = cycles(folder_graph)
    if args.layers:
        print('Folders and the folders they include:')
        for f in sorted(folders):
            print(f'  {f}: {", ".join(sorted(folder_graph[f])) or "-"}')
    for cycle in header_cycles:
        print('include cycle: ' + ' -> '.join(cycle))
    for cycle in folder_cycles:
        witnesses = []
        for a, b in zip(cycle, cycle[1:]):
            edge = sorted((h, t) for h, ts in graph.items() for t in ts if folder(h) == a and folder(t) == b)[0]
            witnesses.append(f'{edge[0]} includes {edge[1]}')
        print('folder cycle: ' + ' -> '.join(cycle) + ' (' + '; '.join(witnesses) + ')')
    for line in late:
        print('include after code: ' + line)
    failed = bool(header_cycles or folder_cycles or late)
    print(f'{len(headers)} headers: {len(header_cycles)} include cycles, {len(folder_cycles)} folder cycles, '
          f'{len(late)} includes after code' + (': FAILED' if failed else ': OK'))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
