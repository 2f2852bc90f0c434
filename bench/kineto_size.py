#!/usr/bin/env python3
"""Bytes per event of Chrome-trace JSON as PyTorch's profiler (Kineto) writes it.

  kineto_size.py measure OUT.json FILE.json.gz...
      For each real trace: the bytes each event takes in the file (from its opening brace to the
      next event's, so separators and indentation count), then per launch+kernel pair: the
      runtime/driver launch event and the kernel event that share args.correlation, and the two
      ac2g flow events PyTorch adds for the pair; and per allocation: the "[memory]" instant
      events of the caching allocator (one at alloc, one at free).

  kineto_size.py convert DUMP OUT.json
      Writes the LAUNCH and GPU_KERNEL records of a `gputrace-report --dump` listing as Kineto
      would (same field order, formatting and number formats as the real files above): an X event
      per cuLaunchKernel, an X event per kernel with args.correlation, and the ac2g flow pair.
      Prints "pairs=N bytes=B" (B: the whole JSON file)."""
import gzip
import json
import re
import sys


def event_spans(text):
    """(start, end_including_separator, event) for each element of traceEvents."""
    m = re.search(r'"traceEvents"\s*:\s*\[', text)
    if not m:
        return []
    dec = json.JSONDecoder()
    i, out, n = m.end(), [], len(text)
    while True:
        while i < n and text[i] in ' \t\r\n,':
            i += 1
        if i >= n or text[i] == ']':
            break
        ev, j = dec.raw_decode(text, i)
        out.append([i, j, ev])
        i = j
    for k in range(len(out) - 1):  # each event owns the separator up to the next one
        out[k][1] = out[k + 1][0]
    return out


def is_launch(ev):
    return (ev.get('ph') == 'X' and ev.get('cat') in ('cuda_runtime', 'cuda_driver')
            and 'Launch' in ev.get('name', '') and 'Kernel' in ev.get('name', ''))


def measure_file(path):
    raw = gzip.open(path, 'rb').read()
    text = raw.decode('utf-8')
    spans = event_spans(text)
    launch, kernel, flow_s, flow_f, mem = {}, {}, {}, {}, []
    for s, e, ev in spans:
        size = len(text[s:e].encode('utf-8'))
        args = ev.get('args') or {}
        if is_launch(ev) and 'correlation' in args:
            launch[args['correlation']] = size
        elif ev.get('ph') == 'X' and ev.get('cat') == 'kernel' and 'correlation' in args:
            kernel[args['correlation']] = size
        elif ev.get('cat') == 'ac2g' and ev.get('ph') == 's':
            flow_s[ev.get('id')] = size
        elif ev.get('cat') == 'ac2g' and ev.get('ph') == 'f':
            flow_f[ev.get('id')] = size
        elif ev.get('name') == '[memory]':
            mem.append(size)
    pairs = [c for c in launch if c in kernel]
    lb = sum(launch[c] for c in pairs)
    kb = sum(kernel[c] for c in pairs)
    with_flows = [c for c in pairs if c in flow_s and c in flow_f]
    fb = sum(flow_s[c] + flow_f[c] for c in with_flows)
    gz = len(open(path, 'rb').read())
    return {
        'file': path.rsplit('/', 1)[-1],
        'bytes': len(raw),
        'gz_bytes': gz,
        'events': len(spans),
        'pairs': len(pairs),
        'launch_bytes_mean': lb / len(pairs) if pairs else None,
        'kernel_bytes_mean': kb / len(pairs) if pairs else None,
        'pair_bytes_mean': (lb + kb) / len(pairs) if pairs else None,
        'pairs_with_flows': len(with_flows),
        'flow_bytes_mean': fb / len(with_flows) if with_flows else None,
        'memory_events': len(mem),
        'memory_event_bytes_mean': sum(mem) / len(mem) if mem else None,
    }


def measure(out, files):
    res = [measure_file(f) for f in files]
    json.dump(res, open(out, 'w'), indent=1)
    for r in res:
        print('kineto %s: %d pairs, %.0f B/pair (+%s B flows), %d memory events' %
              (r['file'], r['pairs'], r['pair_bytes_mean'] or 0,
               '%.0f' % r['flow_bytes_mean'] if r['flow_bytes_mean'] else '-', r['memory_events']))


LAUNCH_RE = re.compile(r'^(\d+) tid=(\d+) LAUNCH (\S+) func=\S+ stream=(\S+) corr=(\S+) '
                       r'grid=(\d+),(\d+),(\d+) block=(\d+),(\d+),(\d+) shmem=(\d+) result=(\S+) '
                       r'dur_ns=(\d+)')
KERNEL_RE = re.compile(r'^(\d+) tid=\d+ GPU_KERNEL - dur_ns=(\d+) corr=(\d+) device=(\d+) '
                       r'context=(\d+) stream=(\d+) .*name_id=(\d+)')
EXT_RE = re.compile(r'tid=\d+ GPU_EXTCORR - ext=(\S+) corr=(\d+)')
NAME_RE = re.compile(r'GPU_NAME - id=(\d+) name="(.*)"$')

# Kineto's layout (libkineto/src/output_json.cpp), as seen in the real files.
RUNTIME_FMT = '''  {{
    "ph": "X", "cat": "cuda_driver", "name": "{name}", "pid": {pid}, "tid": {tid},
    "ts": {ts}, "dur": {dur},
    "args": {{
      "External id": {ext},      "cbid": 307, "correlation": {corr}
    }}
  }},
  {{
    "ph": "s", "id": {corr}, "pid": {pid}, "tid": {tid}, "ts": {ts},
    "cat": "ac2g", "name": "ac2g"
  }},
'''
KERNEL_FMT = '''  {{
    "ph": "X", "cat": "kernel", "name": "{name}", "pid": {device}, "tid": {stream},
    "ts": {ts}, "dur": {dur},
    "args": {{
      "External id": {ext},      "queued": 0, "device": {device}, "context": {context},      "stream": {stream}, "correlation": {corr},      "registers per thread": 32,      "shared memory": {shmem},      "blocks per SM": 0.007576,      "warps per SM": 0.007576,      "grid": [{gx}, {gy}, {gz}],      "block": [{bx}, {by}, {bz}],      "est. achieved occupancy %": 0
    }}
  }},
  {{
    "ph": "f", "id": {corr}, "pid": {device}, "tid": {stream}, "ts": {ts},
    "cat": "ac2g", "name": "ac2g", "bp": "e"
  }},
'''


def us(ns):
    """Microseconds with three decimals, as Kineto writes times (ns resolution)."""
    return '%d.%03d' % (ns // 1000, ns % 1000)


def convert(dump, out):
    base_ns = 1712195495000000000  # an absolute epoch time: Kineto writes epoch microseconds
    launches, kernels, ext, names = {}, [], {}, {}
    pid = 4242
    for line in open(dump):
        m = LAUNCH_RE.match(line)
        if m:
            launches[int(m.group(5), 16)] = m
            continue
        m = KERNEL_RE.match(line)
        if m:
            kernels.append(m)
            continue
        m = EXT_RE.search(line)
        if m:
            ext[int(m.group(2))] = int(m.group(1), 16)
            continue
        m = NAME_RE.search(line)
        if m:
            names[m.group(1)] = m.group(2)
    pairs = 0
    with open(out, 'w') as f:
        f.write('{\n  "schemaVersion": 1,\n  "traceEvents": [\n')
        for k in kernels:
            corr = int(k.group(3))
            la = launches.get(ext.get(corr))
            if not la:
                continue
            pairs += 1
            f.write(RUNTIME_FMT.format(name=la.group(3), pid=pid, tid=la.group(2),
                                       ts=us(base_ns + int(la.group(1))),
                                       dur=us(int(la.group(14))), ext=pairs, corr=corr))
            f.write(KERNEL_FMT.format(name=names.get(k.group(7), '?'), device=k.group(4),
                                      stream=k.group(6), context=k.group(5),
                                      ts=us(base_ns + int(k.group(1))),
                                      dur=us(int(k.group(2))), ext=pairs, corr=corr,
                                      shmem=la.group(12), gx=la.group(6), gy=la.group(7),
                                      gz=la.group(8), bx=la.group(9), by=la.group(10),
                                      bz=la.group(11)))
        f.write('  {\n    "name": "Record Window End", "ph": "i", "s": "g",\n'
                '    "pid": "", "tid": "", "ts": 0\n  }\n  ]\n}\n')
    size = len(open(out, 'rb').read())
    print('pairs=%d bytes=%d' % (pairs, size))


def main(argv):
    if len(argv) >= 3 and argv[1] == 'measure':
        measure(argv[2], argv[3:])
    elif len(argv) == 4 and argv[1] == 'convert':
        convert(argv[2], argv[3])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
