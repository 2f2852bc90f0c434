#!/usr/bin/env python3
"""bench/report.py WORKDIR: turns the raw lines bench/run.sh collected (WORKDIR/raw.txt,
WORKDIR/kineto.json, WORKDIR/commands.txt) into bench/RESULTS.md on stdout.

Every figure is a median over the rounds of one run (variants interleaved round by round);
"added" figures are medians of the per-round differences against the baseline of the same round."""
import json
import os
import statistics
import sys

# On-disk record sizes (include/gputrace/trace_format.h, each pinned by a _Static_assert).
REC = {'launch': 80, 'gpu_kernel': 56, 'gpu_extcorr': 24, 'gpu_api': 40, 'alloc': 72, 'alloc_stack': 72,
       'free': 56}

TARGET_LAUNCH_NS = 50
TARGET_LTTNG_RATIO = 1 / 3
TARGET_PAIR_BYTES = 16
TARGET_JSON_RATIO = 10
TARGET_EVENTS_PER_S = 20e6
TARGET_DECODE_GBPS = 1.0
TARGET_STACK_VS_HEAPTRACK = 0.5
TARGET_STACK_NS = 1000


def parse(path):
    rows = []
    for line in open(path):
        d = {}
        for word in line.split():
            if '=' in word:
                k, v = word.split('=', 1)
                d[k] = v
        if d:
            rows.append(d)
    return rows


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def mfmt(n):
    """A count in millions: '10', '2', '0.1'."""
    return fmt(n / 1e6, 0 if n >= 1e6 else 1)


def fmt(x, nd=0, unit=''):
    if x is None:
        return 'n/a'
    return ('{:,.%df}' % nd).format(x) + unit


# Which section of RESULTS.md each kind of raw line belongs to.
SECTION_OF = {'parts': 0, 'launch': 1, 'alloc': 1, 'tp': 1, 'lttng_session': 1, 'threads': 2, 'size': 3,
              'gzip': 3, 'kineto_conv': 3, 'an': 4, 'an_gen': 4, 'stk': 5, 'stk_size': 5, 'stk_an': 5,
              'mem': 6, 'mem_gen': 6, 'memlive': 6, 'memlive_gen': 6, 'tl': 7, 'tl_gen': 7}

# Environment keys that describe one run (kept per run when runs are merged).
RUN_KEYS = ('date', 'load_start', 'load_end', 'elapsed_s', 'quick', 'sections', 'head', 'base', 'base_subject',
            'lttng', 'lttng_status', 'cpu')  # (cpu: the machine table names the first run's; a later
                                             # run on another CPU says so in its own line)


def replaced_unit(r):
    """What a later run's row replaces of the earlier runs': the rows of the same kind (sec), but
    the trace-size rows of section 1's last round (launch-*, alloc-*) apart from section 3's own
    CUPTI pair run (pair-*): a run of section 1 alone dropped the pair's row (2026-12-05 08:03,
    BENCH_SECTIONS="1 4 5"), and with it RESULTS.md's bytes per launch+kernel pair."""
    s = r.get('sec')
    if s == 'size':
        return s, 'pair' if r.get('kind', '').startswith('pair') else 'last round'
    return s


class Data:
    """The raw lines of one run, or of several merged: a later run's sections replace the same
    sections of the earlier ones (BENCH_SECTIONS re-runs part of the benchmarks). Every row keeps
    the run it came from (run=N), so a merged set can be saved and merged again."""

    def __init__(self, ws):
        self.rows, self.kineto, self.commands = [], [], []
        envs = []  # one dict per run, in order
        for w in ws:
            rows = parse(os.path.join(w, 'raw.txt'))
            tags = {}
            for r in rows:
                t = r.pop('run', '-')
                if t not in tags:
                    tags[t] = len(envs)
                    envs.append({})
                r['run'] = tags[t]
                if r.get('sec') == 'env':
                    envs[r['run']][r['key']] = r['val'].replace('_', ' ')
            body = [r for r in rows if r.get('sec') != 'env']
            units = {replaced_unit(r) for r in body}
            self.rows = [r for r in self.rows if replaced_unit(r) not in units] + body
            kj = os.path.join(w, 'kineto.json')
            if os.path.exists(kj):
                self.kineto = json.load(open(kj))
            cf = os.path.join(w, 'commands.txt')
            if os.path.exists(cf):
                for c in open(cf):
                    c = c.rstrip('\n').replace(TREE, '')  # (paths relative to the repository)
                    if c not in self.commands:
                        self.commands.append(c)
        live = sorted({r['run'] for r in self.rows}) or [0]
        self.runs = [dict(envs[i], _index=i) for i in live if i < len(envs)]
        for e in self.runs:
            e['_kept'] = sorted({SECTION_OF.get(r.get('sec'), 0) for r in self.rows if r['run'] == e['_index']} - {0})
        self.env = {}
        for e in self.runs:
            self.env.update(e)
        self.env.update({k: v for k, v in self.runs[0].items() if k in RUN_KEYS})
        # LTTng's facts belong to the run that measured section 1.
        for e in self.runs:
            if 1 in e['_kept']:
                self.env.update({k: e[k] for k in ('lttng', 'lttng_status') if k in e})

    def save(self, out):
        """Writes the merged raw lines (each with its run=N), commands and Kineto figures to out."""
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, 'raw.txt'), 'w') as f:
            for e in self.runs:
                for k, v in e.items():
                    if not k.startswith('_'):
                        f.write('sec=env key=%s val=%s run=%d\n' % (k, v.replace(' ', '_'), e['_index']))
            for r in self.rows:
                f.write(' '.join('%s=%s' % kv for kv in r.items()) + '\n')
        with open(os.path.join(out, 'commands.txt'), 'w') as f:
            f.write(''.join(c + '\n' for c in self.commands))
        if self.kineto:
            json.dump(self.kineto, open(os.path.join(out, 'kineto.json'), 'w'), indent=1)

    def sel(self, **kw):
        return [r for r in self.rows if all(r.get(k) == v for k, v in kw.items())]

    def one(self, **kw):
        s = self.sel(**kw)
        return s[-1] if s else None

    def med(self, field, **kw):
        return med([num(r.get(field)) for r in self.sel(**kw)])

    def med_sum(self, fields, **kw):
        """Median over rows of the sum of `fields` (rows missing one are skipped)."""
        sums = []
        for r in self.sel(**kw):
            xs = [num(r.get(f)) for f in fields]
            if all(x is not None for x in xs):
                sums.append(sum(xs))
        return med(sums)

    def round_diffs(self, field, base, **kw):
        """Per round: row - baseline row (variant `base`) of the same round."""
        b = {r['rep']: num(r.get(field)) for r in self.sel(**dict(kw, var=base))}
        diffs = []
        for r in self.sel(**kw):
            if r['rep'] in b and b[r['rep']] is not None and num(r.get(field)) is not None:
                diffs.append(num(r[field]) - b[r['rep']])
        return diffs

    def added(self, field, base, **kw):
        """Median over rounds of (row - baseline row of the same round)."""
        return med(self.round_diffs(field, base, **kw))

    def spread(self, field, **kw):
        xs = [num(r.get(field)) for r in self.sel(**kw)]
        xs = [x for x in xs if x is not None]
        return (min(xs), max(xs)) if xs else (None, None)


# "All CPU" of a traced run per launch: the launching threads' and the flusher's.
ALL_CPU = ('cpu_ns_per_op', 'flush_cpu_ns_per_op')
# Full buffers a thread may have waiting for the flusher before it writes one itself
# (GT_HANDOFF_MAX in preload/runtime.c).
HANDOFF_MAX = 7


def thread_cpu(d):
    """gputrace on the stub driver at 1 and 16 threads: CPU ns per launch in the launching
    threads (t1, t16), in the flusher (f1, f16) and both (a1, a16)."""
    f = {}
    for t in ('1', '16'):
        kw = dict(sec='threads', drv='null', var='off', threads=t)
        f['t' + t] = d.med('cpu_ns_per_op', **kw)
        f['f' + t] = d.med('flush_cpu_ns_per_op', **kw)
        f['a' + t] = d.med_sum(ALL_CPU, **kw)
    return f


def launch_numbers(d):
    L = {}
    for sec in ('launch', 'alloc'):
        for v in ('none', 'disable', 'off', 'stacks', 'on', 'lttng_off', 'lttng_on'):
            L[sec, v] = d.med('ns_per_op', sec=sec, var=v)
            L[sec, v, 'cpu'] = d.med('cpu_ns_per_op', sec=sec, var=v)
            L[sec, v, 'add'] = d.added('ns_per_op', 'none', sec=sec, var=v)
            L[sec, v, 'add_cpu'] = d.added('cpu_ns_per_op', 'none', sec=sec, var=v)
            L[sec, v, 'spread'] = d.spread('ns_per_op', sec=sec, var=v)
            L[sec, v, 'flush'] = d.med('flush_cpu_ns_per_op', sec=sec, var=v)
    # LTTng against its own binary without a session (same code, tracepoint disabled).
    L['lttng_add'] = d.added('ns_per_op', 'lttng_off', sec='launch', var='lttng_on')
    L['lttng_add_cpu'] = d.added('cpu_ns_per_op', 'lttng_off', sec='launch', var='lttng_on')
    L['tp_on'] = d.med('ns_per_op', sec='tp', var='lttng_on')
    L['tp_off'] = d.med('ns_per_op', sec='tp', var='lttng_off')
    return L


def size_numbers(d):
    S = {}
    for kind in ('launch-off', 'launch-stacks', 'launch-on', 'alloc-off', 'alloc-stacks', 'alloc-on', 'pair-on'):
        r = d.one(sec='size', kind=kind)
        if r:
            S[kind] = {k: num(v) for k, v in r.items() if k not in ('sec', 'kind')}
    S['pair_incomplete'] = [{k2: num(v) for k2, v in r.items() if k2 not in ('sec', 'kind')}
                            for r in d.sel(sec='size', kind='pair-incomplete')]
    k = d.one(sec='kineto_conv')
    S['conv'] = {k2: num(v) for k2, v in k.items() if k2 != 'sec'} if k else None
    gz = {r['kind']: num(r['bytes']) for r in d.sel(sec='gzip')}
    S['gzip'] = gz
    pairs = sum(x['pairs'] for x in d.kineto)
    S['kineto_pairs'] = pairs
    if pairs:
        S['kineto_pair'] = sum(x['pair_bytes_mean'] * x['pairs'] for x in d.kineto) / pairs
        fl = [x for x in d.kineto if x['flow_bytes_mean']]
        fp = sum(x['pairs_with_flows'] for x in fl)
        S['kineto_flow'] = sum(x['flow_bytes_mean'] * x['pairs_with_flows'] for x in fl) / fp if fp else None
        mem = [x for x in d.kineto if x['memory_event_bytes_mean']]
        mn = sum(x['memory_events'] for x in mem)
        S['kineto_mem'] = sum(x['memory_event_bytes_mean'] * x['memory_events'] for x in mem) / mn if mn else None
    lt = d.sel(sec='lttng_session')
    if lt:
        S['ctf_event'] = med([num(r['bytes']) / num(r['events']) for r in lt])
        S['lttng_discarded'] = sum(int(r['discarded']) for r in lt)
        S['lttng_events'] = sum(int(r['events']) for r in lt)
    return S


def analyzer_numbers(d):
    A = []
    for kind in ('host', 'gpu', 'packed'):
        sizes = sorted({int(r['n']) for r in d.sel(sec='an', kind=kind)})
        for n in sizes:
            if d.one(sec='an', kind=kind, n=str(n), skipped='space'):
                A.append({'kind': kind, 'n': n, 'skipped': True})
                continue
            g = d.one(sec='an_gen', kind=kind, n=str(n))
            rec, by = num(g['records']), num(g['bytes'])
            cat = d.med('ns', sec='an', kind=kind, n=str(n), what='cat')
            dec = d.med('ns', sec='an', kind=kind, n=str(n), what='decode')
            rep_wall = d.med('ns', sec='an', kind=kind, n=str(n), what='report')
            # CPU time of the report where measured (the shared machine's load inflates wall time).
            rep = d.med('cpu_ns', sec='an', kind=kind, n=str(n), what='report') or rep_wall
            rss = max(num(r['rss_kb']) for r in d.sel(sec='an', kind=kind, n=str(n), what='report'))
            reps = len(d.sel(sec='an', kind=kind, n=str(n), what='report'))
            lo, hi = d.spread('cpu_ns', sec='an', kind=kind, n=str(n), what='report')
            A.append({'kind': kind, 'n': n, 'records': rec, 'bytes': by, 'cat_gbps': by / cat,
                      'dec_gbps': by / dec, 'dec_eps': rec / dec * 1e9, 'rep_eps': rec / rep * 1e9,
                      'rep_mbps': by / rep * 1e3, 'rep_s': rep / 1e9, 'rss_mb': rss / 1024,
                      'ns_per_event': rep / rec, 'reps': reps, 'rep_wall_s': rep_wall / 1e9,
                      'cpu': rep != rep_wall,
                      # CPU-time range of the rounds, as events/s: slowest, fastest
                      'eps_lo': rec / hi * 1e9 if hi else None, 'eps_hi': rec / lo * 1e9 if lo else None})
    return A


def pct_over(x, target):
    return '%.1f× the target' % (x / target)


def headline(d, L, S, A, P, K=None, M=None, T=None):
    out = ['## Headline', '']
    add = L['launch', 'off', 'add']
    if add is not None:
        out.append('- **Launch overhead**: gputrace adds **%s ns per `cuLaunchKernel`** without stacks '
                   'and without CUPTI (%s ns of CPU; target ≤ %d ns: %s); %s ns (%s ns of CPU) with '
                   'the default host stacks; %s ns (%s ns of CPU) with the simulated CUPTI and no '
                   'stacks, most of it the simulated CUPTI\'s own work; the no-op preload adds %s ns.' %
                   (fmt(add), fmt(L['launch', 'off', 'add_cpu']), TARGET_LAUNCH_NS,
                    'met' if add <= TARGET_LAUNCH_NS else 'missed by %s ns' % fmt(add - TARGET_LAUNCH_NS),
                    fmt(L['launch', 'stacks', 'add']), fmt(L['launch', 'stacks', 'add_cpu']),
                    fmt(L['launch', 'on', 'add']), fmt(L['launch', 'on', 'add_cpu']),
                    fmt(L['launch', 'disable', 'add'])))
    la = L['lttng_add']
    if add is not None and la:
        lc = L['lttng_add_cpu']
        ac = L['launch', 'off', 'add_cpu']
        out.append('- **Against LTTng-UST**: an LTTng-UST tracepoint (8 integer fields, recorded in a '
                   'session) adds %s ns (%s ns of CPU) to the same launch loop; gputrace costs '
                   '**%.2f×** LTTng (%.2f× in CPU time; target ≤ 0.33×: %s).' %
                   (fmt(la), fmt(lc), add / la, ac / lc if ac and lc else 0,
                    'met' if add / la <= TARGET_LTTNG_RATIO else 'missed'))
    elif L['tp_off'] is not None:
        out.append('- **Against LTTng-UST**: no session daemon could run; only the disabled '
                   'tracepoint was measured (%s ns).' % fmt(L['tp_off'], 1))
    aa = L['alloc', 'off', 'add']
    if aa is not None:
        out.append('- **Allocations**: %s ns added per traced `cuMemAlloc`+`cuMemFree` pair without '
                   'stacks, %s ns with the default stacks (one per allocation).' %
                   (fmt(aa), fmt(L['alloc', 'stacks', 'add'])))
    tc = thread_cpu(d)
    t1, t16, a1, a16 = tc['t1'], tc['t16'], tc['a1'], tc['a16']
    if t1 and t16 and a1 and a16:
        out.append('- **Threads** (lock-free stub driver, %s cores): all the CPU the traced process '
                   'spends per launch (the launching threads and the flusher) is %s ns at 1 thread and '
                   '%s ns at 16 threads; of it, in the launching threads %s and %s ns (at 16 threads '
                   'they pack and write most of their buffers themselves, work the flusher does at 1 '
                   'thread).' % (d.env.get('nproc', '?'), fmt(a1), fmt(a16), fmt(t1), fmt(t16)))
    on = S.get('pair-on')
    if on:
        pair = on['bytes'] / on['launches']
        out.append('- **Trace size**: **%s B per launch+kernel pair** (target ≤ %d B: %s); '
                   '%s B per allocation+free pair.' %
                   (fmt(pair), TARGET_PAIR_BYTES, pct_over(pair, TARGET_PAIR_BYTES),
                    fmt(S['alloc-off']['bytes'] / S['alloc-off']['allocs']) if 'alloc-off' in S else 'n/a'))
        if S.get('kineto_pair'):
            out.append('- **Against Kineto JSON**: PyTorch\'s profiler writes %s B per launch+kernel pair '
                       '(%s B with its flow events) in %s real traces: gputrace is **%.1f× smaller** '
                       '(%.1f× with flows; target ≥ %d×).' %
                       (fmt(S['kineto_pair']), fmt(S['kineto_pair'] + (S['kineto_flow'] or 0)),
                        len(d.kineto), S['kineto_pair'] / pair,
                        (S['kineto_pair'] + (S['kineto_flow'] or 0)) / pair, TARGET_JSON_RATIO))
    host = [a for a in A if a['kind'] == 'host' and not a.get('skipped')]
    if host:
        big = host[-1]
        out.append('- **Analyzer**: `gputrace-report --json` %s M events/s (%s MB/s) on %s M events '
                   '(target ≥ 20 M/s), decode pass %.2f GB/s (target ≥ 1 GB/s), `cat` %.2f GB/s; '
                   'peak RSS %s MB at %s M events vs %s MB at %s M.' %
                   (fmt(big['rep_eps'] / 1e6, 1), fmt(big['rep_mbps']), fmt(big['n'] / 1e6),
                    big['dec_gbps'], big['cat_gbps'], fmt(big['rss_mb'], 1), fmt(big['n'] / 1e6),
                    fmt(host[0]['rss_mb'], 1), fmt(host[0]['n'] / 1e6)))
    gpu = [a for a in A if a['kind'] == 'gpu' and not a.get('skipped')]
    if gpu:
        out.append('- **Analyzer, with GPU records**: %s M events/s on %s M events; peak RSS %s.' % (
                   fmt(gpu[-1]['rep_eps'] / 1e6, 1), fmt(gpu[-1]['n'] / 1e6),
                   ', '.join('%s MB at %s M' % (fmt(a['rss_mb']), fmt(a['n'] / 1e6)) for a in gpu)))
    out += extra_headline(d, K or {}, M or [], T or [])
    return out + ['']


def extra_headline(d, K, M, T):
    out = []
    V = stk_verdicts(K)
    if V:
        g, h = K['cuda_stk'], K['malloc_ht']
        sg, sh = K.get(('size', 'gputrace')), K.get(('size', 'heaptrack'))
        ag, ah = K.get(('an', 'gputrace')), K.get(('an', 'heaptrack'))
        out.append('- **Allocation with a %s-frame stack, against heaptrack**: gputrace adds **%s ns** of CPU per '
                   'allocation+free pair (%s ns wall), heaptrack %s ns (%s ns wall): **%.2f×** heaptrack in the '
                   'traced thread (target ≤ %.1f×: %s; < 1 µs: %s), %.2f× counting all CPU of the run '
                   '(heaptrack interprets in a second process)%s.%s%s' % (
                       g['depth'], fmt(g['add_cpu']), fmt(g['add']), fmt(h['add_cpu']), fmt(h['add']),
                       V['ratio_cpu'], TARGET_STACK_VS_HEAPTRACK,
                       'met' if V['ratio_cpu'] <= TARGET_STACK_VS_HEAPTRACK else 'missed',
                       'met' if g['add_cpu'] < TARGET_STACK_NS else 'missed', V['ratio_run'] or 0,
                       '; when no event repeats the previous one\'s stack, %.2f× (%s against %s ns)' % (
                           V['ratio_alt_cpu'], fmt(K['cuda_stk_alt']['add_cpu']),
                           fmt(K['malloc_ht_alt']['add_cpu'])) if V.get('ratio_alt_cpu') is not None else '',
                       ' Trace: %s B per pair as written (%s B through zstd -3) against heaptrack\'s %s B of '
                       'text (%s B per pair as its zstd file).' % (
                           fmt(sg['bytes'] / sg['events'], 1), fmt(sg['zst_bytes'] / sg['events'], 1),
                           fmt(sh['bytes'] / sh['events'], 1), fmt(sh['zst_bytes'] / sh['events'], 3))
                       if sg and sh else '',
                       ' Analysis: %s s of CPU (`gputrace-report`) against %s s (`heaptrack_print`).' % (
                           fmt(ag.get('cpu_s') or ag['s'], 2), fmt(ah.get('cpu_s') or ah['s'], 2))
                       if ag and ah else ''))
    parts = []
    for fm in ('text', 'json'):
        v = linear_verdict(M, ('cur', fm))
        if v:
            parts.append('%s %s → %s CPU ns per record (%.2f×), peak RSS %s → %s MB' % (
                fm, fmt(v['first'][('cur', fm)]['ns_per_rec'], 1), fmt(v['last'][('cur', fm)]['ns_per_rec'], 1),
                v['time_ratio'], fmt(v['rss_first'], 1), fmt(v['rss_last'], 1)))
    if parts:
        ok = [x for x in M if not x.get('skipped')]
        out.append('- **Memory analysis, %s M → %s M allocation records**: %s.' % (
            fmt(ok[0]['n'] / 1e6), fmt(ok[-1]['n'] / 1e6), '; '.join(parts)))
    big = [x for x in T if not x.get('skipped') and ('cur', 'json') in x]
    if big:
        x = big[-1]
        n = x['gen']['kernels']
        line = ('- **Timeline analysis, %s M kernel records** (+ launches and correlation records): %s s of CPU, '
                '%s MB peak RSS' % (mfmt(n), fmt(x[('cur', 'json')]['t'] / 1e9, 1), fmt(x[('cur', 'json')]['rss_mb'])))
        if ('base', 'json') in x:
            line += ' (the report as of `%s`: %s s, %s MB)' % (
                d.env.get('base', '?'), fmt(x[('base', 'json')]['t'] / 1e9, 1), fmt(x[('base', 'json')]['rss_mb']))
        if len(big) > 1:
            y = big[0]
            line += '; at %s M: %s s, %s MB' % (mfmt(y['gen']['kernels']), fmt(y[('cur', 'json')]['t'] / 1e9, 2),
                                                fmt(y[('cur', 'json')]['rss_mb']))
        out.append(line + '.')
    return out


def rerun_lines(d):
    out = []
    for e in d.runs[1:]:
        out.append('Section%s %s from a later run: `BENCH_SECTIONS="%s" make bench`, %s, %s s, load average %s '
                   '/ %s, tree at %s%s; their figures below replace the first run\'s.' % (
                       's' if len(e['_kept']) > 1 else '', ', '.join(str(x) for x in e['_kept']),
                       e.get('sections', '?').replace(',', ' '),
                       e.get('date', '?'), e.get('elapsed_s', '?'),
                       e.get('load_start', '?').replace('/', ' '), e.get('load_end', '?').replace('/', ' '),
                       e.get('head', '?'),
                       '' if e.get('cpu') == d.runs[0].get('cpu') else
                       ', on another machine: **%s** (not the CPU in the table below)' % e.get('cpu', '?')))
    return out + [''] if out else []


def machine(d):
    e = d.env
    q = ' (BENCH_QUICK=1: small sizes, fewer rounds)' if e.get('quick') == '1' else ''
    return ['# gputrace benchmarks — results', '',
            'Run: `make bench`%s, %s, %s s%s.' % (
                q, e.get('date', '?'), e.get('elapsed_s', '?'),
                '' if len(d.runs) == 1 else
                ' (sections %s from this run)' % ', '.join(str(x) for x in d.runs[0]['_kept'])),
            ''] + rerun_lines(d) + [
            '| machine | |', '|---|---|',
            '| CPUs (`nproc`) | %s |' % e.get('nproc', '?'),
            '| CPU model | %s%s |' % (e.get('cpu', '?'), '' if all(r.get('cpu') == e.get('cpu') for r in d.runs)
                                      else ' (the first run\'s; later runs on another CPU say so above)'),
            '| kernel | %s |' % e.get('kernel', '?'),
            '| compiler | %s |' % e.get('compiler', '?'),
            '| LTTng | %s (session daemon: %s) |' % (e.get('lttng', 'none'),
                                                     {'1': 'ran', 'nosessiond': 'could not run',
                                                      '0': 'not installed'}.get(e.get('lttng_status'), '?')),
            '| load average at start / end | %s / %s |' % (e.get('load_start', '?').replace('/', ' '),
                                                          e.get('load_end', '?').replace('/', ' ')),
            '',
            'The machine is shared and noisy (other jobs may run on it: see the load average). '
            'Variants run interleaved, round by round, in rotating order; figures are medians over '
            'the rounds, and "added" figures are medians of per-round differences against the '
            'baseline of the same round.' + loaded_note(d), '']


def loaded_note(d):
    try:
        load = max(float(e.get('load_start', '0').split('/')[0]) for e in d.runs)
        cores = float(d.env.get('nproc', '0'))
    except ValueError:
        return ''
    if not cores or load <= cores:
        return ''
    if load <= 2 * cores:
        return (' The load average (%.1f at the start) was somewhat above the %d cores: wall-clock figures '
                'may be stretched by waits for a core; the CPU-time columns beside them are not, and the '
                'analyzer and heaptrack verdicts use them.' % (load, cores))
    return (' **This run\'s load average (%.0f at its start) was above the %d cores**: other jobs held '
            'the cores much of the time, so wall-clock figures include waits for a core and are '
            'inflated unevenly; the CPU-time columns (thread CPU in the loops, user + system for the '
            'analyzer) are the ones to compare, and the analyzer and heaptrack verdicts use them. '
            'Section 1\'s launch verdicts still use wall time, as before: read them with the CPU '
            'column beside.' % (load, cores))


def launch_section(d, L, P, S):
    n = d.one(sec='launch', var='none')
    ev = n['events'] if n else '?'
    rounds = len(d.sel(sec='launch', var='none'))
    out = ['## 1. Launch overhead', '',
           '`bench_launch launch %s 1` (after a warm-up and 250 ms idle, so the tracer\'s clock reads the counter): %s `cuLaunchKernel` calls in a tight loop on one '
           'thread against the simulated driver, kernels of 20 ns started at once '
           '(`GTSIM_KERNEL_NS=20 GTSIM_LAUNCH_LATENCY_NS=0`, so the stream never backs up and the '
           'loop measures host cost), activity ring bounded to 65,536 records. '
           'Timed inside the process: no start-up, no exit flush. %d rounds.' % (ev, ev, rounds), '',
           '| variant | ns per launch (median) | min–max | added vs no shim | CPU ns per launch | added CPU |',
           '|---|---:|---:|---:|---:|---:|']
    names = [('none', 'no shim (simulated driver alone)'),
             ('disable', 'no-op preload (`GPUTRACE_DISABLE=1`: all wrappers, nothing recorded)'),
             ('off', 'gputrace, no stacks, no CUPTI (`GPUTRACE_STACKS=none GPUTRACE_CUPTI=off`)'),
             ('stacks', 'gputrace, default stacks (alloc, launch, sync; 64 frames), no CUPTI'),
             ('on', 'gputrace + simulated CUPTI, no stacks'),
             ('lttng_off', 'LTTng-UST tracepoint after each launch, no session (disabled)'),
             ('lttng_on', 'LTTng-UST tracepoint after each launch, recorded in a session')]
    for v, name in names:
        if L['launch', v] is None:
            continue
        lo, hi = L['launch', v, 'spread']
        out.append('| %s | %s | %s–%s | %s | %s | %s |' % (
            name, fmt(L['launch', v], 1), fmt(lo, 1), fmt(hi, 1),
            '—' if v == 'none' else fmt(L['launch', v, 'add'], 1), fmt(L['launch', v, 'cpu'], 1),
            '—' if v == 'none' else fmt(L['launch', v, 'add_cpu'], 1)))
    out.append('')
    if L['tp_on'] is not None or L['tp_off'] is not None:
        out.append('LTTng-UST tracepoint alone (same event, no driver call, `bench_launch_lttng tp`): '
                   '%s ns per event recorded in a session, %s ns disabled (no session). Against its own '
                   'binary without a session, the recorded tracepoint adds %s ns per launch (CPU: %s ns).'
                   % (fmt(L['tp_on'], 1), fmt(L['tp_off'], 1), fmt(L['lttng_add'], 1),
                      fmt(L['lttng_add_cpu'], 1)))
        if S.get('lttng_events'):
            out.append('The sessions recorded %s events with %d discarded (channel: 8 × 4 MiB '
                       'sub-buffers, discard mode).' % (fmt(S['lttng_events']), S['lttng_discarded']))
        out.append('')
    out += ['### Allocations', '',
            '`bench_launch alloc`: `cuMemAlloc(4096)` + `cuMemFree` pairs, same conditions.', '',
            '| variant | ns per pair (median) | min–max | added vs no shim | CPU ns per pair |',
            '|---|---:|---:|---:|---:|']
    for v, name in names[:5]:
        if L['alloc', v] is None:
            continue
        lo, hi = L['alloc', v, 'spread']
        out.append('| %s | %s | %s–%s | %s | %s |' % (
            name, fmt(L['alloc', v], 1), fmt(lo, 1), fmt(hi, 1),
            '—' if v == 'none' else fmt(L['alloc', v, 'add'], 1), fmt(L['alloc', v, 'cpu'], 1)))
    out.append('')
    if P:
        tsc = P.get('tsc_ns')
        out += ['### Where the time goes', '',
                '`bench_parts` on the same machine: %s`clock_gettime(CLOCK_MONOTONIC)` %s ns, a '
                'sequentially consistent store %s ns, zlib `crc32` %s GB/s (%s ns per 80-byte launch '
                'record). The shim reads its clock twice per launch (the CPU\'s counter, anchored to '
                'CLOCK_MONOTONIC by the flusher; `clock_gettime` where the counter is unusable), '
                'marks the call in flight, and writes the 80-byte record into its thread\'s buffer; '
                'packing, checksums and `write(2)` run on the flusher thread, whose CPU time is not in '
                'the CPU columns above (it runs beside the loop, on the other core): %s. The rest of '
                'the launch cost is the record itself and the re-entrancy guard.' % (
                    'one counter read (`rdtsc`) costs **%s ns**, ' % fmt(tsc, 1) if tsc else '',
                    fmt(P['clock_ns'], 1), fmt(P['seqcst_store_ns'], 1), fmt(P['crc32_gbps'], 2),
                    fmt(P['crc32_ns_per_80b'], 1),
                    'the flusher spent %s ns of CPU per launch (no stacks, no CUPTI) and %s ns per '
                    'allocation+free pair' % (fmt(L['launch', 'off', 'flush'], 1), fmt(L['alloc', 'off', 'flush'], 1))
                    if L.get(('launch', 'off', 'flush')) is not None else 'not measured in this run'), '']
    sz = S.get('launch-on')
    if sz:
        out += ['With CUPTI on, the traced run of the last round holds %s kernel records for %s launches, '
                '%s CUPTI records dropped and %s host records lost.' %
                (fmt(sz['kernels']), fmt(sz['launches']), fmt(sz['cupti_dropped']), fmt(sz['lost'])),
                'The simulated CUPTI does much more per call than the shim does with it: on every '
                'driver call its API hook builds an API record (with a `getpid()` system call) and an '
                'external-correlation record under a mutex, copies each kernel from the driver\'s '
                'ring under the driver lock, and converts it; the shim\'s own share is one push and '
                'one pop of the external correlation id around the call, and the conversion of '
                'delivered buffers on its flusher thread. So the CUPTI figure measures the simulation '
                'more than gputrace and is not a prediction for real CUPTI.', '']
    return out


def threads_section(d):
    out = ['## 2. Threads', '',
           '`bench_launch launch EVENTS T`: the same number of launches in total, split over T threads, '
           'each on its own non-blocking stream, all started together. "CPU ns/launch/thread" is each '
           'thread\'s CPU time over its launches (mean of threads), "wall ns/launch" is the elapsed time '
           'of the whole section over all launches (1 / throughput). The machine has %s cores, so '
           'beyond 2 threads they time-share; per-thread wall times then grow by design and are '
           'not shown.' % d.env.get('nproc', '?'), '']
    for drv, title in (('sim', 'Simulated driver'), ('null', 'Stub driver without shared state (`bench/nulldrv.c`)')):
        rows = d.sel(sec='threads', drv=drv)
        if not rows:
            continue
        vars_ = [v for v in ('none', 'off', 'stacks', 'base') if any(r['var'] == v for r in rows)]
        label = {'none': 'no shim', 'off': 'gputrace', 'stacks': 'gputrace + stacks',
                 'base': 'the `BENCH_BASE_LIB` shim (no stacks, no CUPTI)'}
        ev = d.one(sec='threads', drv=drv, var='none')['events']
        out += ['### %s (%s launches per run)' % (title, fmt(num(ev))), '']
        hdr = '| threads | ' + ' | '.join('%s: CPU ns/launch/thread | %s: wall ns/launch | %s: launches/s' %
                                           (label[v], label[v], label[v]) for v in vars_)
        if 'off' in vars_:
            hdr += (' | gputrace added CPU ns/launch/thread | gputrace: flusher CPU ns/launch | '
                    'gputrace: all CPU ns/launch (threads + flusher) |')
        out += [hdr, '|' + '---|' * (1 + 3 * len(vars_) + 3 * ('off' in vars_))]
        for t in ('1', '2', '4', '8', '16'):
            cells = []
            for v in vars_:
                cells += [fmt(d.med('cpu_ns_per_op', sec='threads', drv=drv, var=v, threads=t), 1),
                          fmt(d.med('ns_per_op', sec='threads', drv=drv, var=v, threads=t), 1),
                          fmt(d.med('ops_per_s', sec='threads', drv=drv, var=v, threads=t) / 1e6
                              if d.med('ops_per_s', sec='threads', drv=drv, var=v, threads=t) else None, 2) + ' M']
            if 'off' in vars_:
                cells.append(fmt(d.added('cpu_ns_per_op', 'none', sec='threads', drv=drv, var='off', threads=t), 1))
                cells.append(fmt(d.med('flush_cpu_ns_per_op', sec='threads', drv=drv, var='off', threads=t), 1))
                cells.append(fmt(d.med_sum(ALL_CPU, sec='threads', drv=drv, var='off', threads=t), 1))
            out.append('| %s | %s |' % (t, ' | '.join(cells)))
        out.append('')
        if 'base' in vars_ and 'off' in vars_:
            # the same rounds: this tree's shim against the base one, per-round differences
            parts = []
            for t in ('1', '16'):
                diffs = d.round_diffs('cpu_ns_per_op', 'base', sec='threads', drv=drv, var='off', threads=t)
                if diffs:
                    parts.append('at %s thread%s %s against %s ns of CPU per launch (median per-round '
                                 'difference %s ns, rounds from %s to %s)' % (
                                     t, '' if t == '1' else 's',
                                     fmt(d.med('cpu_ns_per_op', sec='threads', drv=drv, var='off', threads=t), 1),
                                     fmt(d.med('cpu_ns_per_op', sec='threads', drv=drv, var='base', threads=t), 1),
                                     fmt(med(diffs), 1), fmt(min(diffs), 1), fmt(max(diffs), 1)))
            if parts:
                lib = next((r['base_lib'] for r in d.runs if r.get('base_lib')), '')
                out += ['This tree\'s shim (no stacks, no CUPTI) against the `BENCH_BASE_LIB` one%s in the same '
                        'rounds: ' % (' (%s)' % lib if lib else '') + '; '.join(parts) + '.', '']
    sim1 = d.med('cpu_ns_per_op', sec='threads', drv='sim', var='off', threads='1')
    sim16 = d.med('cpu_ns_per_op', sec='threads', drv='sim', var='off', threads='16')
    nul1 = d.med('ops_per_s', sec='threads', drv='null', var='off', threads='1')
    nul2 = d.med('ops_per_s', sec='threads', drv='null', var='off', threads='2')
    tc = thread_cpu(d)
    c1, c16, a1, a16, f1, f16 = (tc[k] for k in ('t1', 't16', 'a1', 'a16', 'f1', 'f16'))
    if sim1 and sim16 and nul1 and nul2 and c1 and c16 and a1 and a16:
        flat = ('does not grow from 1 to 16 threads beyond the 25%% allowed (%s → %s ns), as a hot '
                'path that shares nothing between threads (per-thread buffers, no lock) should' % (
                    fmt(a1), fmt(a16)) if a16 <= 1.25 * a1 else
                'grows from %s ns at 1 thread to %s ns at 16' % (fmt(a1), fmt(a16)))
        out += ['What this shows: on the stub driver all the CPU the traced process spends per launch '
                '(the launching threads\' CPU and the flusher\'s) %s. The same work moves between '
                'threads: each record is written by its thread, then packed, checksummed and written to '
                'the file by the flusher when it keeps up (at 1 thread it spends %s ns per launch on '
                'another core), by the thread itself when the flusher is %d buffers behind. At 16 '
                'threads on %s cores the flusher gets a seventeenth of the CPU (%s ns per launch), so '
                'the threads do most of the packing: their own CPU per launch goes from %s to %s ns. '
                'On the simulated driver, whose every call takes one global mutex, '
                'all threads queue on that mutex: throughput does not grow with the '
                'thread count, with or without the shim, and the CPU cost per launch grows with threads '
                '(%s → %s ns with gputrace), the queueing (futex wake-ups, cache lines moving between '
                'cores) slowing everything around the call, the shim\'s work included. Two threads on '
                'the stub driver reach %.1f× the throughput of one: two cores would give up to 2× on an '
                'idle machine; this one was shared (load average in the table at the top).'
                % (flat, fmt(f1, 1), HANDOFF_MAX, d.env.get('nproc', '?'), fmt(f16, 1), fmt(c1), fmt(c16),
                   fmt(sim1), fmt(sim16), nul2 / nul1), '']
    return out


def size_section(d, S):
    out = ['## 3. Trace size', '']
    off, on, al = S.get('launch-off'), S.get('pair-on'), S.get('alloc-off')
    if on:
        pair = on['bytes'] / on['launches']
        # (the pair's run and section 1's last round may be different runs: say so)
        other = ''
        if off and off.get('run') != on.get('run'):
            e = [x for x in d.runs if x['_index'] == on.get('run')]
            other = ' (from the run of %s)' % (e[0].get('date', '?') if e else '?')
        out += ['Measured from real traced runs, file size / count, so file and chunk headers, '
                'watermarks, thread and name records are included: the launch-only and allocation '
                'traces of the last round of section 1, and a separate run of %s launches with the '
                'simulated CUPTI and the default stacks%s, whose activity ring holds every launch (CUPTI '
                'records dropped: %s; '
                'the GPU API record is there because CUPTI emits external-correlation records only '
                'together with API records):' % (fmt(on['launches']), other, fmt(on['cupti_dropped']))]
        for x in S.get('pair_incomplete', []):
            out.append('An earlier attempt of that run came back incomplete and was run again: %s '
                       'launches but %s kernels and %s GPU records, with %s records reported dropped '
                       'and %s lost (GPU records missing silently: a shim/simulated-CUPTI bug, not a '
                       'benchmark artifact).' % (fmt(x['launches']), fmt(x['kernels']),
                                                 fmt(x['gpu_records']), fmt(x['cupti_dropped']),
                                                 fmt(x['lost'])))
        out += ['',
                '| trace | bytes | count | bytes each | records behind it |', '|---|---:|---:|---:|---|']

        def behind(each, text, raw):
            # The shim may store its chunks zstd-compressed (GPUTRACE_COMPRESS): then the fixed-width
            # records are what went into the compressor, not what is on disk.
            return text if each >= 0.9 * raw else text + ', before the chunk compression'
        if off:
            each = off['bytes'] / off['launches']
            out.append('| launches, no CUPTI, no stacks | %s | %s launches | %s | %s |' %
                       (fmt(off['bytes']), fmt(off['launches']), fmt(each, 1),
                        behind(each, 'launch %d' % REC['launch'], REC['launch'])))
        ls = S.get('launch-stacks')
        if ls:
            each = ls['bytes'] / ls['launches']
            out.append('| launches, no CUPTI, default stacks | %s | %s launches | %s | %s |' %
                       (fmt(ls['bytes']), fmt(ls['launches']), fmt(each, 1),
                        behind(each, 'launch %d; stack nodes once per distinct stack' % REC['launch'],
                               REC['launch'])))
        raw = REC['launch'] + REC['gpu_kernel'] + REC['gpu_extcorr'] + REC['gpu_api']
        out.append('| launches with CUPTI: launch + kernel pair | %s | %s launches, %s kernels | **%s** | %s |' %
                   (fmt(on['bytes']), fmt(on['launches']), fmt(on['kernels']), fmt(pair, 1),
                    behind(pair, 'launch %d + GPU kernel %d + extcorr %d + GPU API %d = %d' % (
                        REC['launch'], REC['gpu_kernel'], REC['gpu_extcorr'], REC['gpu_api'], raw), raw)))
        if al:
            each = al['bytes'] / al['allocs']
            out.append('| allocations, no stacks: alloc + free pair | %s | %s pairs | %s | %s |'
                       % (fmt(al['bytes']), fmt(al['allocs']), fmt(each, 1),
                          behind(each, 'alloc %d + free %d' % (REC['alloc'], REC['free']),
                                 REC['alloc'] + REC['free'])))
        ast = S.get('alloc-stacks')
        if ast:
            each = ast['bytes'] / ast['allocs']
            out.append('| allocations, default stacks: alloc + free pair | %s | %s pairs | %s | %s |'
                       % (fmt(ast['bytes']), fmt(ast['allocs']), fmt(each, 1),
                          behind(each, 'alloc %d (with its stack id) + free %d' % (REC['alloc_stack'], REC['free']),
                                 REC['alloc_stack'] + REC['free'])))
        out.append('')
        if pair < 0.9 * raw:
            out += ['These traces are stored compressed (`GPUTRACE_COMPRESS` default: threads\' chunks '
                    'in the packed codec after a delta transform, GPU chunks zstd level 1). The loops '
                    'above repeat one call with the same arguments, so the compressor has an easy job: '
                    'read the bytes per event as a best case; traces of real programs (varied sizes, '
                    'addresses, kernels, times) compress less.', '']
    if d.kineto:
        out += ['PyTorch profiler (Kineto) Chrome-trace JSON, measured in real traces '
                '(`%s`): each event\'s bytes in the file, indentation and separators included; a pair '
                'is the `cudaLaunchKernel` (or driver launch) X event and the kernel X event with the '
                'same `args.correlation`; PyTorch also writes an `ac2g` flow start and end per pair.'
                % 'bench/kineto_size.py measure', '',
                '| file | events | pairs | launch event B | kernel event B | pair B | + flow events B | '
                '`[memory]` event B | gzip ratio |', '|---|---:|---:|---:|---:|---:|---:|---:|---:|']
        for x in d.kineto:
            out.append('| %s | %s | %s | %s | %s | %s | %s | %s | %.1f× |' % (
                x['file'], fmt(x['events']), fmt(x['pairs']), fmt(x['launch_bytes_mean']),
                fmt(x['kernel_bytes_mean']), fmt(x['pair_bytes_mean']), fmt(x['flow_bytes_mean']),
                fmt(x['memory_event_bytes_mean']), x['bytes'] / x['gz_bytes']))
        out.append('')
    conv = S.get('conv')
    if conv and on:
        jp = conv['bytes'] / conv['pairs']
        tp = conv['trace_bytes'] / conv['pairs']
        out += ['The same events as ours: a traced run of %s launches with CUPTI, dumped '
                '(`gputrace-report --dump`) and written the way Kineto writes them (`bench/kineto_size.py '
                'convert`: launch X event, kernel X event, flow pair; our kernel name is 12 characters, '
                'real ones are often hundreds, so this is the JSON\'s best case): %s B per pair as JSON '
                'against %s B in our trace (%.1f×).' % (fmt(conv['pairs']), fmt(jp), fmt(tp, 1), jp / tp)]
        gz = S.get('gzip', {})
        if gz.get('trace') and gz.get('json'):
            out.append('Compressed with `gzip -6`: %s B per pair for our trace, %s B for the JSON.' %
                       (fmt(gz['trace'] / conv['pairs'], 1), fmt(gz['json'] / conv['pairs'], 1)))
        out.append('')
    if on:
        pair = on['bytes'] / on['launches']
        rows = ['| what | gputrace | peer | ratio (peer / gputrace) | target |', '|---|---:|---:|---:|---|',
                '| launch + kernel pair | %s B | — | — | ≤ %d B: **%s** |' %
                (fmt(pair, 1), TARGET_PAIR_BYTES, 'met' if pair <= TARGET_PAIR_BYTES else
                 'missed, %s' % pct_over(pair, TARGET_PAIR_BYTES))]
        if S.get('kineto_pair'):
            kp = S['kineto_pair']
            kf = kp + (S.get('kineto_flow') or 0)
            rows.append('| pair vs Kineto JSON (real traces, %s pairs) | %s B | %s B | %.1f× | ≥ %d×: **%s** |' %
                        (fmt(S['kineto_pairs']), fmt(pair, 1), fmt(kp), kp / pair, TARGET_JSON_RATIO,
                         'met' if kp / pair >= TARGET_JSON_RATIO else 'missed'))
            rows.append('| pair + flow events vs Kineto JSON | %s B | %s B | %.1f× | ≥ %d×: **%s** |' %
                        (fmt(pair, 1), fmt(kf), kf / pair, TARGET_JSON_RATIO,
                         'met' if kf / pair >= TARGET_JSON_RATIO else 'missed'))
        if al and S.get('kineto_mem'):
            ap = al['bytes'] / al['allocs']
            rows.append('| allocation + free vs two Kineto `[memory]` events | %s B | %s B | %.1f× | — |' %
                        (fmt(ap, 1), fmt(2 * S['kineto_mem']), 2 * S['kineto_mem'] / ap))
        if S.get('ctf_event'):
            rows.append('| one launch event vs LTTng CTF on disk (8 integer fields) | %s B | %s B | %.1f× | — |' %
                        (fmt(off['bytes'] / off['launches'], 1) if off else 'n/a', fmt(S['ctf_event'], 1),
                         S['ctf_event'] / (off['bytes'] / off['launches']) if off else 0))
        out += rows + ['']
    return out


def analyzer_section(d, A):
    out = ['## 4. Analyzer', '',
           'Traces made by `bench/gen_trace` (the shim\'s file layout: 4 threads, 256 KiB host chunks, '
           'a watermark every 25,000 records, 16 kernels). Host mix per thread: alloc, launch, launch, '
           'free of the allocation 64 cycles back, so live state stays at 256 allocations whatever the '
           'size. GPU variant: the same plus a CUPTI kernel record and an external-correlation record '
           'per launch, in GPU chunks. Packed variant: the host mix stored as the shim writes it by '
           'default (`gen_trace --compress 1 --pack`: threads\' chunks in the packed codec, the rest zstd '
           'level 1), so decoding also unpacks every chunk; file MB is then the compressed size. '
           'Events = records. All files read from the page cache (written, '
           '`sync`ed, read once before timing). `cat` = `cat FILE > /dev/null`; decode = '
           '`bench_decode` (the report\'s reader: framing, CRC-32, record checks, watermark re-ordering; '
           'the sink only counts); full = `gputrace-report --json` under `bench/rusage` (the figures of GNU time -v, CPU time to the microsecond), whole '
           'process, one core; its rates and ns/event from its CPU time (user + system) where '
           'measured, its wall time beside them.', '',
           '| trace | events | file MB | `cat` GB/s | decode M events/s | decode GB/s | full analysis M events/s '
           '| full MB/s | full CPU s | full wall s | ns/event | peak RSS MB | rounds |',
           '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|']
    for a in A:
        if a.get('skipped'):
            out.append('| %s %s M | skipped: not enough disk or memory | | | | | | | | | | | |' % (a['kind'], fmt(a['n'] / 1e6)))
            continue
        out.append('| %s | %s | %s | %.2f | %s | %.2f | %s | %s | %s | %s | %s | %s | %d |' % (
            a['kind'], fmt(a['records']), fmt(a['bytes'] / 1e6), a['cat_gbps'], fmt(a['dec_eps'] / 1e6, 1),
            a['dec_gbps'], fmt(a['rep_eps'] / 1e6, 1), fmt(a['rep_mbps']),
            fmt(a['rep_s'], 2) if a['cpu'] else 'n/a', fmt(a['rep_wall_s'], 2),
            fmt(a['ns_per_event'], 1), fmt(a['rss_mb'], 1), a['reps']))
    out.append('')
    for kind in ('host', 'gpu', 'packed'):
        xs = [a for a in A if a['kind'] == kind and not a.get('skipped')]
        if len(xs) > 1:
            out.append('Scaling, %s: ns per event %s (%s); peak RSS %s.' % (
                kind, ' → '.join(fmt(a['ns_per_event'], 1) for a in xs),
                ' → '.join('%s M' % fmt(a['n'] / 1e6) for a in xs),
                ' → '.join('%s MB' % fmt(a['rss_mb'], 1) for a in xs)))
    out.append('')
    return out


# ---- 5. allocation with a deep stack against heaptrack ------------------------------------------

STK_VARS = [('cuda_none', 'no tracer: `cuMemAlloc`+`cuMemFree` (stub driver)', 'cuda_none'),
            ('cuda_nostk', 'gputrace, no stacks (`GPUTRACE_STACKS=none`)', 'cuda_none'),
            ('cuda_stk', 'gputrace, default stacks (the allocation\'s, ≤ 64 frames)', 'cuda_none'),
            ('malloc_none', 'no tracer: `malloc`+`free`', 'malloc_none'),
            ('malloc_ht', 'heaptrack (every `malloc`/`free`, with the malloc\'s stack)', 'malloc_none'),
            ('cuda_none_alt', 'alternating stacks (`ALT=1`): no tracer, `cuMemAlloc`+`cuMemFree`', 'cuda_none_alt'),
            ('cuda_stk_alt', 'alternating stacks: gputrace, default stacks', 'cuda_none_alt'),
            ('malloc_none_alt', 'alternating stacks: no tracer, `malloc`+`free`', 'malloc_none_alt'),
            ('malloc_ht_alt', 'alternating stacks: heaptrack', 'malloc_none_alt')]


def stk_numbers(d):
    K = {}
    for v, _, base in STK_VARS:
        rows = d.sel(sec='stk', var=v)
        if not rows:
            continue
        for r in rows:
            r['run_cpu_s'] = str(num(r.get('user_s', 0)) + num(r.get('sys_s', 0)))
            r['total_events'] = str(num(r['events']) + num(r.get('warmup', 0)))
        x = {'n': len(rows), 'ns': d.med('ns_per_op', sec='stk', var=v),
             'cpu': d.med('cpu_ns_per_op', sec='stk', var=v),
             'spread': d.spread('ns_per_op', sec='stk', var=v),
             'run_cpu_s': d.med('run_cpu_s', sec='stk', var=v),
             'run_s': d.med('run_s', sec='stk', var=v),
             'rss_mb': (d.med('run_rss_kb', sec='stk', var=v) or 0) / 1024,
             'frames': rows[0].get('frames'), 'depth': rows[0].get('depth'),
             'events': num(rows[0]['events']), 'total_events': num(rows[0]['total_events'])}
        if v != base:
            x['add'] = d.added('ns_per_op', base, sec='stk', var=v)
            x['add_cpu'] = d.added('cpu_ns_per_op', base, sec='stk', var=v)
            rc = d.added('run_cpu_s', base, sec='stk', var=v)
            x['add_run_cpu_ns'] = rc * 1e9 / x['total_events'] if rc is not None else None
        K[v] = x
    for dll in ('pydll', 'cdll'):
        on = d.sel(sec='pystk', var=dll + '_on')
        if on:
            K['py', dll] = {'off': d.med('ns_per_alloc', sec='pystk', var=dll + '_off'),
                            'on': d.med('ns_per_alloc', sec='pystk', var=dll + '_on'),
                            'add': d.added('ns_per_alloc', dll + '_off', sec='pystk', var=dll + '_on'),
                            'n': len(on), 'depth': on[0].get('depth'), 'events': num(on[0]['n'])}
    for kind in ('gputrace', 'heaptrack'):
        r = d.one(sec='stk_size', kind=kind)
        if r:
            K['size', kind] = {k: num(v) for k, v in r.items() if k not in ('sec', 'kind')}
        ns = d.med('ns', sec='stk_an', kind=kind)
        if ns is not None:
            cpu = d.med('cpu_ns', sec='stk_an', kind=kind)
            K['an', kind] = {'s': ns / 1e9, 'cpu_s': cpu / 1e9 if cpu else None,
                             'rss_mb': max(num(r['rss_kb']) for r in d.sel(sec='stk_an', kind=kind)) / 1024}
    return K


def stk_verdicts(K):
    g, h = K.get('cuda_stk'), K.get('malloc_ht')
    if not g or not h or g.get('add') is None or not h.get('add'):
        return None
    ga, ha = K.get('cuda_stk_alt'), K.get('malloc_ht_alt')
    alt = None
    if ga and ha and ga.get('add_cpu') is not None and ha.get('add_cpu'):
        alt = ga['add_cpu'] / ha['add_cpu']
    return {'ratio': g['add'] / h['add'], 'ratio_alt_cpu': alt,
            'ratio_cpu': g['add_cpu'] / h['add_cpu'] if h.get('add_cpu') else None,
            'ratio_run': (g['add_run_cpu_ns'] / h['add_run_cpu_ns']
                          if g.get('add_run_cpu_ns') and h.get('add_run_cpu_ns') else None)}


def stk_section(d, K):
    g = K.get('cuda_stk')
    if not g:
        return []
    out = ['## 5. Allocation with a %s-frame stack: gputrace against heaptrack' % g['depth'], '',
           '`bench_stack cuda|malloc %s %s` (bench/bench_stack.c): %s allocation+free pairs of 4 KiB, '
           'each made at the bottom of the same chain of %s distinct functions (%s frames in all as '
           'glibc\'s `backtrace()` counts them, `main` and the C start-up included), timed inside the '
           'process after a warm-up. gputrace traces `cuMemAlloc`+`cuMemFree` on the stub driver '
           '(`bench/nulldrv.c`: no driver work, no lock) with its default stacks (`GPUTRACE_STACKS` '
           'default: allocations carry their stack, frees do not; depth 64, so the whole chain); '
           'heaptrack %s traces `malloc`+`free` from the same chain (it too records the allocation\'s '
           'stack and only the pointer at a free). Each tracer against its own untraced baseline of '
           'the same round (rounds interleaved, rotating order), %d rounds. "Whole run CPU" is user + '
           'system time of every process of the run (`/usr/bin/time`), start-up and exit included, '
           'over all %s pairs (warm-up included): heaptrack\'s interpreter runs as a second process '
           'and does most of its work there.' % (
               fmt(g['events']), g['depth'], fmt(g['events']), g['depth'], g['frames'],
               d.env.get('heaptrack', '').replace('heaptrack ', ''), g['n'], fmt(g['total_events'])), '',
           '| variant | ns per pair (median) | min–max | added | CPU ns per pair | added CPU | '
           'whole run CPU, added per pair | whole run s | peak RSS MB |',
           '|---|---:|---:|---:|---:|---:|---:|---:|---:|']
    for v, name, base in STK_VARS:
        x = K.get(v)
        if not x:
            continue
        lo, hi = x['spread']
        out.append('| %s | %s | %s–%s | %s | %s | %s | %s | %s | %s |' % (
            name, fmt(x['ns'], 1), fmt(lo, 1), fmt(hi, 1), '—' if v == base else fmt(x['add'], 1),
            fmt(x['cpu'], 1), '—' if v == base else fmt(x['add_cpu'], 1),
            '—' if v == base else fmt(x['add_run_cpu_ns']), fmt(x['run_s'], 2), fmt(x['rss_mb'], 1)))
    out.append('')
    V = stk_verdicts(K)
    h = K.get('malloc_ht')
    if V:
        nc = K.get('cuda_nostk', {}).get('add_cpu')
        out += ['gputrace adds **%s ns** of CPU per allocation+free pair with the allocation\'s %s-frame stack, '
                'heaptrack **%s ns**: **%.2f×** heaptrack\'s cost in the traced thread (%.2f× in wall time; '
                'target ≤ %.2f×; the verdicts use CPU time because the shared machine\'s load inflates wall '
                'times unevenly), and %.2f× counting every process\'s CPU over the whole run (%s ns against '
                '%s ns per pair). Without stacks gputrace adds %s ns of CPU; the stack itself therefore costs '
                'about %s ns, ~%s ns per frame unwound.' % (
                    fmt(g['add_cpu']), g['depth'], fmt(h['add_cpu']), V['ratio_cpu'] or 0, V['ratio'],
                    TARGET_STACK_VS_HEAPTRACK, V['ratio_run'] or 0, fmt(g['add_run_cpu_ns']),
                    fmt(h['add_run_cpu_ns']), fmt(nc),
                    fmt(g['add_cpu'] - nc) if nc is not None else 'n/a',
                    fmt((g['add_cpu'] - nc) / num(g['frames']), 1) if nc is not None else 'n/a'),
                '']
        ga, ha = K.get('cuda_stk_alt'), K.get('malloc_ht_alt')
        if V.get('ratio_alt_cpu') is not None:
            out += ['The same chain with every event\'s stack different from the previous one\'s (`ALT=1`: two '
                    'copies of the chain, alternating): gputrace adds **%s ns** of CPU per pair, heaptrack '
                    '**%s ns**: **%.2f×**. gputrace\'s unwinder reuses the part of its previous walk whose '
                    'return-address slots still hold (preload/unwind.c), so a loop allocating from one '
                    'place pays only for the changed frames, and keeps the walk before that one whole: '
                    'the alternating run finds each of its %s-frame stacks there (a compare of the '
                    'slots that walk read) and in the two-way cache of recent stacks; a thread whose '
                    'stack differs at every event from both walks stops logging them for a while.' % (
                        fmt(ga['add_cpu']), fmt(ha['add_cpu']), V['ratio_alt_cpu'], g['frames']), '']
    P = [(dll, K[('py', dll)]) for dll in ('pydll', 'cdll') if ('py', dll) in K]
    if P:
        out += ['Python frames (`bench/py_stack.py`, Python %s): %s allocations through ctypes from one '
                'line %s Python frames deep (stub driver, the shim with its default stacks), thread CPU '
                'time per allocation, with and without `GPUTRACE_PYTHON=0`, %d rounds interleaved:' % (
                    d.env.get('python', '?'), fmt(P[0][1]['events']), P[0][1]['depth'], P[0][1]['n']), '',
                '| call | GIL | Python frames read by | CPU ns per allocation, `GPUTRACE_PYTHON=0` | '
                'with Python frames | added by the Python frames |',
                '|---|---|---|---:|---:|---:|']
        for dll, x in P:
            out.append('| `ctypes.%s` | %s | %s | %s | %s | %s |' % (
                'PyDLL' if dll == 'pydll' else 'CDLL', 'held' if dll == 'pydll' else 'released',
                'the C API' if dll == 'pydll' else 'struct offsets (preload/python.c)',
                fmt(x['off'], 1), fmt(x['on'], 1), fmt(x['add'], 1)))
        out.append('')
    sg, sh = K.get(('size', 'gputrace')), K.get(('size', 'heaptrack'))
    ag, ah = K.get(('an', 'gputrace')), K.get(('an', 'heaptrack'))
    if sg or sh:
        out += ['Trace size and analysis time for the same %s allocation+free pairs (the last round\'s '
                'files; analysis = `gputrace-report FILE` (text) and `heaptrack_print FILE`, each the '
                'tool\'s default report, from the page cache, median of %s runs):' % (
                    fmt((sg or sh)['events']), d.env.get('quick') == '1' and '2' or '3'), '',
                '| tool | file bytes | bytes per pair | zstd bytes per pair | analysis wall s | analysis CPU s | '
                'analysis peak RSS MB |',
                '|---|---:|---:|---:|---:|---:|---:|']
        for kind, sz, an, what in (('gputrace', sg, ag, 'the file as the shim wrote it; `zstd -3` of it'),
                                   ('heaptrack', sh, ah, 'its text lines, as `zstd -dc` gives them; '
                                    'the file on disk is zstd')):
            if not sz:
                continue
            out.append('| %s (%s) | %s | %s | %s | %s | %s | %s |' % (
                kind, what, fmt(sz['bytes']), fmt(sz['bytes'] / sz['events'], 1),
                '%s (%s B in all)' % (fmt(sz['zst_bytes'] / sz['events'], 3 if sz['zst_bytes'] < sz['events'] else 2),
                                      fmt(sz['zst_bytes'])), fmt(an['s'], 2) if an else 'n/a',
                fmt(an.get('cpu_s'), 2) if an else 'n/a', fmt(an['rss_mb'], 1) if an else 'n/a'))
        out.append('')
    out += ['What differs, to read these fairly:', '',
            '- heaptrack intercepts every `malloc`/`free` of the process (libc\'s own included: a '
            'handful here); gputrace intercepts CUDA driver calls only. Both were given the same '
            'number of allocations from the same depth.',
            '- heaptrack unwinds with libunwind (`unw_backtrace`, DWARF CFI from `.eh_frame`, '
            'per-thread cache); gputrace with its own walker over per-return-address rules derived '
            'once from `.eh_frame` (libunwind for any frame outside those rules; '
            '`GPUTRACE_UNWIND=libunwind` forces it), which also reuses the unchanged part of its '
            'previous walk, or the whole walk before it (the alternating run above). Both intern '
            'stacks in a tree.',
            '- heaptrack writes a short text line per event into a pipe and a second process '
            '(`heaptrack_interpret`) resolves, deduplicates and compresses it while the program '
            'runs, on the other core of this 2-core machine: cheap for the traced thread, not for the '
            'machine (the whole-run column). gputrace writes fixed-width binary records (times, '
            'address, size, stream, context, call duration: 72 + 56 B per pair) to per-thread '
            'buffers that its own flusher thread writes out (and compresses, where the shim is '
            'built to: see the bytes per pair); nothing is interpreted until `gputrace-report`.',
            '- heaptrack\'s file has no per-event time or address (it records a time stamp every '
            '10 ms and maps pointers to allocation indices in its interpreter), hence its few bytes '
            'per event; gputrace keeps every event\'s time and address, which the memory timeline, '
            'temporaries and OOM forensics need.',
            '- The baselines differ: the stub driver\'s `cuMemAlloc` does almost nothing, glibc\'s '
            '`malloc`+`free` of 4 KiB costs a few tens of ns; the figures compared are the added '
            'costs.', '']
    return out


# ---- 6, 7. memory and timeline analyses: scaling -------------------------------------------------

def scale_numbers(d, sec):
    X = []
    sizes = sorted({int(r['n']) for r in d.sel(sec=sec)})
    for n in sizes:
        if d.one(sec=sec, n=str(n), skipped='space'):
            X.append({'n': n, 'skipped': True})
            continue
        g = d.one(sec=sec + '_gen', n=str(n))
        x = {'n': n, 'gen': {k: num(v) for k, v in g.items() if k not in ('sec',)} if g else {}}
        for b in ('cur', 'base'):
            for fm in ('text', 'json'):
                rows = d.sel(sec=sec, n=str(n), bin=b, fmt=fm)
                if not rows:
                    continue
                ns = d.med('ns', sec=sec, n=str(n), bin=b, fmt=fm)
                cpu = d.med('cpu_ns', sec=sec, n=str(n), bin=b, fmt=fm)
                rss = max(num(r['rss_kb']) for r in rows) / 1024
                # Per-record cost from CPU time where measured (the machine is shared: wall time
                # also holds the waits for a core), else from wall time.
                t = cpu if cpu else ns
                x[b, fm] = {'s': ns / 1e9, 'cpu_s': cpu / 1e9 if cpu else None, 'rss_mb': rss,
                            'reps': len(rows), 'ns_per_rec': t / x['gen']['records'] if x['gen'] else None,
                            't': t}
        X.append(x)
    return X


def linear_verdict(xs, key):
    ok = [x for x in xs if not x.get('skipped') and key in x]
    if len(ok) < 2:
        return None
    a, b = ok[0], ok[-1]
    return {'first': a, 'last': b, 'time_ratio': b[key]['ns_per_rec'] / a[key]['ns_per_rec'],
            'rss_first': a[key]['rss_mb'], 'rss_last': b[key]['rss_mb'],
            'linear': b[key]['ns_per_rec'] <= 1.25 * a[key]['ns_per_rec'],
            'bounded': b[key]['rss_mb'] <= 1.5 * a[key]['rss_mb'] + 4}


def base_label(d):
    b = d.env.get('base')
    return ('`%s` (%s)' % (b, d.env.get('base_subject', ''))) if b else None


def scale_table(d, xs, formats, unit, count_key, count_name):
    has_base = any(('base', fm) in x for x in xs for fm in formats)
    bins = ['cur', 'base'] if has_base else ['cur']
    label = {'cur': 'now', 'base': 'before'}
    hdr = '| %s | records | file MB |' % count_name
    for b in bins:
        for fm in formats:
            pre = '%s, %s' % (label[b], fm) if has_base else fm
            hdr += ' %s: wall s | %s: CPU s | %s: CPU ns/%s | %s: peak RSS MB |' % (pre, pre, pre, unit, pre)
    out = [hdr, '|' + '---:|' * (3 + 4 * len(bins) * len(formats))]
    for x in xs:
        if x.get('skipped'):
            out.append('| %s | skipped: not enough disk |' % fmt(x['n']))
            continue
        g = x['gen']
        cnt = g.get(count_key) or x['n']
        cells = [fmt(cnt), fmt(g.get('records')), fmt(g.get('bytes', 0) / 1e6)]
        for b in bins:
            for fm in formats:
                y = x.get((b, fm))
                if not y:
                    cells += ['n/a'] * 4
                    continue
                cells += [fmt(y['s'], 2), fmt(y['cpu_s'], 2), fmt(y['t'] / cnt, 1), fmt(y['rss_mb'], 1)]
        out.append('| ' + ' | '.join(cells) + ' |')
    return out + ['']


def mem_section(d, M, ML):
    if not M:
        return []
    out = ['## 6. Memory analysis: scaling (issue 5)', '',
           '`gen_trace --mem --pool 25 N` (bench/gen_trace.c): N allocation records (allocations, frees, '
           'and a quarter of the pairs as blocks of an annotated pool), 4 threads, each holding 1,024 '
           'live driver allocations (512 B to 32 MiB) and up to 512 live pool blocks (256 B to 2 MiB) '
           'whatever N is: after filling its slots each thread frees a pseudo-random live one and '
           'allocates into it again. Every second allocation carries one of 64 host stacks (32 frames). '
           '`gputrace-report FILE` (text) and `gputrace-report --json FILE` under `bench/rusage` (the figures of GNU time -v, CPU time to the microsecond), '
           'whole process, file in the page cache; medians of the rounds, peak RSS the largest.']
    if base_label(d):
        out[-1] += (' "before" = the report built from commit %s with `bench/build_rev.sh`, run on the same '
                    'files in the same rounds; "now" = the working tree\'s (%s).' % (base_label(d), d.env.get('head', '?')))
    out += ['']
    out += scale_table(d, M, ['text', 'json'], 'record', 'mix', 'allocation records')
    for fm in ('text', 'json'):
        v = linear_verdict(M, ('cur', fm))
        if v:
            out.append('Scaling (%s): CPU ns per record %s from %s M to %s M records (%.2f×), peak RSS %s → %s MB.' % (
                fm, ' → '.join(fmt(x[('cur', fm)]['ns_per_rec'], 1) for x in M if ('cur', fm) in x),
                fmt(v['first']['n'] / 1e6), fmt(v['last']['n'] / 1e6), v['time_ratio'],
                fmt(v['rss_first'], 1), fmt(v['rss_last'], 1)))
    if ML:
        x = ML[0]
        y = x.get(('cur', 'text'))
        m1 = next((m for m in M if m['n'] == x['n'] and ('cur', 'text') in m), None)
        if y and m1:
            out.append('Live state, not trace size: the same %s M records with 16× the live allocations '
                       '(16,384 per thread, 65,536 in all): peak RSS %s MB (text) against %s MB with 1,024 '
                       'per thread, so the memory follows the live set.' % (
                           fmt(x['n'] / 1e6), fmt(y['rss_mb'], 1), fmt(m1[('cur', 'text')]['rss_mb'], 1)))
    return out + ['']


def tl_section(d, T):
    if not T:
        return []
    out = ['## 7. Timeline analysis: scaling (issue 6)', '',
           '`gen_trace --timeline N` (bench/gen_trace.c): N GPU kernel records, each with its launch and '
           'its external-correlation record (3 records per kernel), 4 host threads on 2 devices with 2 '
           'streams each; bursts of 1-16 launches, kernels of 2 µs to 512 µs queued behind each other '
           'per stream, one burst in four followed by a `cuCtxSynchronize`, host work of 1 µs to 2 ms '
           'between bursts (one in 64: 5-50 ms), one burst in 16 bracketed by an allocation and its '
           'free (a quarter of those slow), launches with host stacks: ~73% device utilization, '
           'gaps of every length. `gputrace-report --json FILE` under `bench/rusage` (the figures of GNU time -v, CPU time to the microsecond).']
    if base_label(d):
        out[-1] += (' "before" = the report from commit %s (`bench/build_rev.sh`), "now" = the working '
                    'tree\'s (%s), same files, same rounds.' % (base_label(d), d.env.get('head', '?')))
    out += ['']
    out += scale_table(d, T, ['json'], 'kernel', 'kernels', 'kernels')
    for b in ('cur', 'base'):
        v = linear_verdict(T, (b, 'json'))
        if v:
            n0 = v['first']['gen']['kernels']
            n1 = v['last']['gen']['kernels']
            out.append('Scaling (%s): %s → %s CPU ns per kernel (%.2f×) from %s M to %s M kernels; peak RSS '
                       '%s → %s MB (%s B per kernel).' % (
                           'now' if b == 'cur' else 'before',
                           fmt(v['first'][(b, 'json')]['t'] / n0, 0),
                           fmt(v['last'][(b, 'json')]['t'] / n1, 0), v['time_ratio'],
                           fmt(n0 / 1e6), fmt(n1 / 1e6), fmt(v['rss_first'], 1), fmt(v['rss_last'], 1),
                           fmt((v['rss_last'] - v['rss_first']) * 1048576 / (n1 - n0))))
    return out + ['']


def targets_section(d, L, S, A, P, K=None, M=None, T=None):
    rows = ['## Targets', '', '| target | measured | verdict | likely reason where missed |', '|---|---|---|---|']
    add = L['launch', 'off', 'add']
    if add is not None:
        reason = ''
        if add > TARGET_LAUNCH_NS and P:
            reason = ('on the launching thread (%s ns of CPU) about half is the two counter reads the '
                      'record\'s start time and call duration need, the rest the 80-byte record, the '
                      're-entrancy guard and the in-flight mark (see "Where the time goes"); the wall '
                      'figure also holds the flusher\'s packing of each record (its CPU per launch in '
                      'section 1) and, on this loaded 2-core machine, waits for a core' %
                      fmt(L['launch', 'off', 'add_cpu']))
        rows.append('| ≤ %d ns added per launch (no stacks) | %s ns (no stacks, no CUPTI) | %s | %s |' % (
            TARGET_LAUNCH_NS, fmt(add, 1), 'met' if add <= TARGET_LAUNCH_NS else
            '**missed** by %s ns (%.1f×)' % (fmt(add - TARGET_LAUNCH_NS), add / TARGET_LAUNCH_NS), reason))
    la = L['lttng_add']
    if add is not None and la:
        r = add / la
        rows.append('| ≤ 1/3 of the LTTng-UST event cost | %s / %s ns = %.2f | %s | %s |' % (
            fmt(add, 1), fmt(la, 1), r, 'met' if r <= TARGET_LTTNG_RATIO else
            ('**missed** (%.1f× the allowed share)' % (r / TARGET_LTTNG_RATIO)
             if r / TARGET_LTTNG_RATIO >= 1.1 else
             '**missed** by %.0f%% of the allowed share' % (100 * (r / TARGET_LTTNG_RATIO - 1))),
            'LTTng-UST reads the clock once per event and writes a smaller event; gputrace reads it '
            'twice (start and duration) and writes an 80-byte record' if r > TARGET_LTTNG_RATIO else ''))
    tc = thread_cpu(d)
    t1, t16, a1, a16 = tc['t1'], tc['t16'], tc['a1'], tc['a16']
    if t1 and t16 and a1 and a16:
        flat = a16 <= 1.25 * a1
        rows.append('| ns per event flat from 1 to 16 threads | all CPU per launch (threads + flusher): '
                    '%s → %s ns; in the launching threads alone %s → %s ns (stub driver) | %s | %s |' % (
                        fmt(a1, 1), fmt(a16, 1), fmt(t1, 1), fmt(t16, 1),
                        ('met (%.0f%% more, within the 25%% allowed)' % (100 * (a16 / a1 - 1)) if a16 >= a1 else
                         'met (%.0f%% less at 16 threads)' % (100 * (1 - a16 / a1))) if flat else
                        '**not flat** (%.0f%% more)' % (100 * (a16 / a1 - 1)),
                        '%sat 16 threads the flusher gets a seventeenth of %s cores and the threads '
                        'pack and write their own full buffers (the flusher\'s CPU per launch falls '
                        'from %s to %s ns); see section 2' % (
                            'the per-thread figure grows because ' if t16 > t1 else '',
                            d.env.get('nproc', '?'), fmt(tc['f1'], 1), fmt(tc['f16'], 1))
                        if flat else
                        'time-sharing 2 cores among 16 threads (cache and TLB refills at each switch); '
                        'the flusher gets ~1/17 of the CPU, so threads that outrun it pack and write their own '
                        'oldest buffer; see section 2'))
    on = S.get('pair-on')
    if on:
        pair = on['bytes'] / on['launches']
        rows.append('| ≤ %d B per launch+kernel pair | %s B | %s | %s |' % (
            TARGET_PAIR_BYTES, fmt(pair, 1), 'met' if pair <= TARGET_PAIR_BYTES else
            '**missed** by %s B (%s)' % (fmt(pair - TARGET_PAIR_BYTES), pct_over(pair, TARGET_PAIR_BYTES)),
            '' if pair <= TARGET_PAIR_BYTES else 'fixed-width records: launch 80 + kernel 56 + extcorr 24 + '
            'GPU API 40 B, full 64-bit times, handles and ids in each; no delta or varint encoding, no '
            'compression'))
        if S.get('kineto_pair'):
            r = S['kineto_pair'] / pair
            rows.append('| ≥ %d× smaller than Kineto JSON | %.1f× (%.1f× counting its flow events) | %s | %s |' % (
                TARGET_JSON_RATIO, r, (S['kineto_pair'] + (S.get('kineto_flow') or 0)) / pair,
                'met' if r >= TARGET_JSON_RATIO else '**missed** (%.0f%% of the way)' % (100 * r / TARGET_JSON_RATIO),
                'the same fixed-width records' if r < TARGET_JSON_RATIO else ''))
    host = [a for a in A if a['kind'] == 'host' and not a.get('skipped')]
    if host:
        big = host[-1]
        slow = [a for a in host if a['rep_eps'] < TARGET_EVENTS_PER_S]
        worst = min(host, key=lambda a: a['rep_eps'])
        short = TARGET_EVENTS_PER_S / worst['rep_eps']
        rows.append('| full analysis ≥ 20 M events/s on one core | %s M/s (%s M events) | %s | %s |' % (
            ' / '.join(fmt(a['rep_eps'] / 1e6, 1) for a in host),
            ', '.join(fmt(a['n'] / 1e6) for a in host),
            'met' if not slow else
            ('**missed** at %s by %s' % (', '.join('%s M' % fmt(a['n'] / 1e6) for a in slow),
                                          '%.1f×' % short if short >= 1.1 else
                                          '%.1f%%' % (100 * (short - 1)))),
            '' if not slow else '%sthe decode pass alone runs at %s M/s (%s M events); the process start-up '
            '(about 2 ms of CPU, what `gputrace-report --help` takes: exec and loading its 13 shared libraries) weighs a little on the smallest trace. At 100 M events '
            'about a seventh of the CPU time is the kernel copying the file into the reader\'s buffers '
            '(read(), about what `cat` takes); by perf at 10 M events (2026-12-04, 14:00) a quarter of the '
            'report is the time-order merge (each held record read back from cache, the sorted ring of '
            'threads), a quarter the memory analysis (live table, peak buckets, series) and a sixth the '
            'read() copy and the chunk checksums; the rest is spread over the other analyses' % (
                (lambda xs: 'rounds from the slowest to the fastest: %s (this VM\'s slow periods last '
                 'over many consecutive rounds); ' % '; '.join(xs) if xs else '')(
                    ['%s–%s M/s at %s M events (%s rounds)' % (
                        fmt(a['eps_lo'] / 1e6, 1), fmt(a['eps_hi'] / 1e6, 1), fmt(a['n'] / 1e6), a['reps'])
                     for a in slow if a.get('eps_lo') and a.get('eps_hi')]),
                fmt(worst['dec_eps'] / 1e6, 1), fmt(worst['n'] / 1e6))))
        met = [a for a in host if a['dec_gbps'] >= TARGET_DECODE_GBPS]
        miss = [a for a in host if a['dec_gbps'] < TARGET_DECODE_GBPS]
        sizes = lambda xs: ', '.join('%s M' % fmt(a['n'] / 1e6) for a in xs)
        if not miss:
            verdict = 'met'
        elif not met:
            verdict = '**missed** by %.1f× (largest trace)' % (TARGET_DECODE_GBPS / big['dec_gbps'])
        else:
            verdict = 'borderline: met at %s, **missed** at %s' % (sizes(met), sizes(miss))
        rows.append('| decode pass ≥ 1 GB/s | %s GB/s (%s) | %s | %s |' % (
            ' / '.join('%.2f' % a['dec_gbps'] for a in host), sizes(host), verdict,
            '' if not miss else 'zlib CRC-32 (%s GB/s here) over every byte plus the copy of every host '
            'record into the re-ordering buffer and its sort' % (fmt(P['crc32_gbps'], 2) if P else '?')))
        r0, r1 = host[0]['rss_mb'], big['rss_mb']
        ok = r1 <= 1.5 * r0 + 4
        rows.append('| RSS independent of event count (host mix) | %s MB at %s M → %s MB at %s M | %s | |' % (
            fmt(r0, 1), fmt(host[0]['n'] / 1e6), fmt(r1, 1), fmt(big['n'] / 1e6), 'met' if ok else '**missed**'))
        s0, s1 = host[0]['ns_per_event'], big['ns_per_event']
        ok = s1 <= 1.25 * s0
        rows.append('| linear scaling | %s → %s ns/event | %s | |' % (
            fmt(s0, 1), fmt(s1, 1), 'met (within 25%)' if ok else '**missed** (%.0f%% slower per event)' % (100 * (s1 / s0 - 1))))
    gpu = [a for a in A if a['kind'] == 'gpu' and not a.get('skipped')]
    if len(gpu) > 1:
        g0, g1 = gpu[0], gpu[-1]
        # Bounded: no growth over the last step (10x the events) where there are three sizes; the
        # streaming timeline's reorder queues and heap (1 s of trace, at most 2^19 activities) may fill
        # up to that cap between the first two in a dense trace, and then stays there.
        ref = gpu[-2] if len(gpu) > 2 else g0
        ok = g1['rss_mb'] <= 1.5 * ref['rss_mb'] + 4
        rows.append('| RSS independent of event count (with GPU records) | %s | %s | %s |' % (
            ' → '.join('%s MB at %s M' % (fmt(a['rss_mb'], 1), fmt(a['n'] / 1e6)) for a in gpu),
            ('met: flat over the last %.0f× the events (the activities waiting in the timeline\'s reorder, 1 s of '
             'trace and at most 2^19 of them, fill up to that cap in this dense trace, then stay there)' %
             (g1['n'] / ref['n'])) if ok and ref is not g0 else 'met' if ok else
            '**missed**: grows with the trace (%s B per event)' %
            fmt((g1['rss_mb'] - ref['rss_mb']) * 1048576 / (g1['records'] - ref['records'])),
            '' if ok else 'state the streaming timeline should drop is kept: see docs/ANALYSES.md § Streaming'))
        s0, s1 = g0['ns_per_event'], g1['ns_per_event']
        ok = s1 <= 1.25 * s0
        rows.append('| linear scaling (with GPU records) | %s → %s ns/event | %s | %s |' % (
            fmt(s0, 1), fmt(s1, 1), 'met (within 25%)' if ok else
            '**missed** (%.0f%% slower per event)' % (100 * (s1 / s0 - 1)),
            '' if ok else 'per-kernel state that outgrows the caches'))
    rows += extra_targets(K or {}, M or [], T or [])
    return rows + ['']


def extra_targets(K, M, T):
    rows = []
    V = stk_verdicts(K)
    if V:
        g, h = K['cuda_stk'], K['malloc_ht']
        ok = V['ratio'] <= TARGET_STACK_VS_HEAPTRACK
        nostk = K.get('cuda_nostk', {}).get('add_cpu')
        ok = V['ratio_cpu'] <= TARGET_STACK_VS_HEAPTRACK
        rows.append('| allocation with a %s-frame stack ≤ %.1f× heaptrack\'s cost | %s / %s CPU ns = %.2f× in the '
                    'traced thread (wall: %.2f×; whole-run CPU of all processes: %.2f×) | %s | %s |' % (
                        g['depth'], TARGET_STACK_VS_HEAPTRACK, fmt(g['add_cpu'], 1), fmt(h['add_cpu'], 1),
                        V['ratio_cpu'], V['ratio'], V['ratio_run'] or 0,
                        'met' if ok else '**missed** (%.1f× the allowed share)' %
                        (V['ratio_cpu'] / TARGET_STACK_VS_HEAPTRACK),
                        '' if ok else 'gputrace spends ~%s ns of its %s ns on the stack, the rest (%s ns) '
                        'is the records without stacks (two clock reads and two records per pair); '
                        'heaptrack\'s other in-thread work is one short text line into a pipe, its '
                        'interpretation happens in a second process' % (
                            fmt(g['add_cpu'] - nostk) if nostk is not None else '?', fmt(g['add_cpu']),
                            fmt(nostk) if nostk is not None else '?')))
        if V.get('ratio_alt_cpu') is not None:
            ok = V['ratio_alt_cpu'] <= TARGET_STACK_VS_HEAPTRACK
            rows.append('| the same, no event repeating the previous stack (`ALT=1`) ≤ %.1f× heaptrack | '
                        '%s / %s CPU ns = %.2f× | %s | %s |' % (
                            TARGET_STACK_VS_HEAPTRACK, fmt(K['cuda_stk_alt']['add_cpu'], 1),
                            fmt(K['malloc_ht_alt']['add_cpu'], 1), V['ratio_alt_cpu'],
                            'met' if ok else '**missed** (%.1f× the allowed share)' %
                            (V['ratio_alt_cpu'] / TARGET_STACK_VS_HEAPTRACK),
                            '' if ok else 'the stack is found in neither of the two walks kept (or '
                            'is walked anew: ~4-5 ns a frame against libunwind\'s ~6-9); the records '
                            'without stacks as above'))
        ok = g['add_cpu'] < TARGET_STACK_NS
        rows.append('| allocation with a %s-frame stack < 1 µs | %s CPU ns (%s ns wall) added per allocation+free '
                    'pair | %s | %s |' % (
            g['depth'], fmt(g['add_cpu'], 1), fmt(g['add'], 1),
            'met' if ok else '**missed** by %s ns' % fmt(g['add_cpu'] - TARGET_STACK_NS),
            '' if ok else 'every frame (~%s here) is walked through its CFI rule' % g['frames']))
    for fm in ('text', 'json'):
        v = linear_verdict(M, ('cur', fm))
        if not v:
            continue
        rows.append('| memory analysis (%s): linear time, %s M → %s M allocation records | %s → %s CPU ns/record '
                    '(%.2f×) | %s | %s |' % (
                        fm, fmt(v['first']['n'] / 1e6), fmt(v['last']['n'] / 1e6),
                        fmt(v['first'][('cur', fm)]['ns_per_rec'], 1), fmt(v['last'][('cur', fm)]['ns_per_rec'], 1),
                        v['time_ratio'], 'met (within 25%)' if v['linear'] else
                        '**missed** (%.0f%% slower per record)' % (100 * (v['time_ratio'] - 1)), ''))
        rows.append('| memory analysis (%s): RSS bounded by live state | %s MB at %s M → %s MB at %s M | %s | |' % (
            fm, fmt(v['rss_first'], 1), fmt(v['first']['n'] / 1e6), fmt(v['rss_last'], 1),
            fmt(v['last']['n'] / 1e6), 'met' if v['bounded'] else '**missed**: grows with the trace'))
    v = linear_verdict(T, ('cur', 'json'))
    if v:
        n0, n1 = v['first']['gen']['kernels'], v['last']['gen']['kernels']
        rows.append('| timeline analysis: RSS bounded, %s M → %s M kernels | %s MB → %s MB | %s | %s |' % (
            fmt(n0 / 1e6), fmt(n1 / 1e6), fmt(v['rss_first'], 1), fmt(v['rss_last'], 1),
            'met' if v['bounded'] else '**missed**: %s B per kernel' %
            fmt((v['rss_last'] - v['rss_first']) * 1048576 / (n1 - n0)),
            '' if v['bounded'] else 'analyzer/analyses/gpu.c keeps every activity (`acts`, 48 B), every launch '
            '(`launches`, 40 B, and a 32-B slot in `launch_idx`) and every CUPTI correlation (a 32-B slot in '
            '`extcorr`) until the end of the file, analyzer/analyses/gaps.c every host call (32 B); `ga_xgrow` '
            'zero-fills each doubled array, so RSS follows capacity, up to 2× the count'))
        rows.append('| timeline analysis: linear time | %s → %s CPU ns/kernel (%.2f×) | %s | %s |' % (
            fmt(v['first'][('cur', 'json')]['t'] / n0), fmt(v['last'][('cur', 'json')]['t'] / n1),
            v['time_ratio'], 'met (within 25%)' if v['linear'] else
            '**missed** (%.0f%% slower per kernel)' % (100 * (v['time_ratio'] - 1)),
            '' if v['linear'] else 'hash-map probes (`probe()`: over half the CPU at 10 M kernels) into '
            '`launch_idx` and `extcorr`, two tables of 2^24 slots (512 MiB each) that outgrow the caches and '
            'the TLB, and the whole-trace sort of the activities'))
    return rows


# This tree's root: the commands a run records name it, and keep only the paths under it, so that
# RESULTS.md regenerates the same wherever the tree lies (tests/cases/bench_results_regen.sh).
TREE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + '/'


def commands_section(d):
    out = ['## Commands', '', 'Every distinct command `bench/run.sh` ran, in order (repeated ones once; '
           'paths relative to the repository).', '', '```sh']
    out += d.commands  # (made relative to TREE as they were read)
    return out + ['```', '']


def saved_section(name):
    """A separate run's results (bench/torch_bridge.sh, bench/torch_overhead.sh, bench/torch_instr.sh: they need the torch
    virtualenv; bench/html_large.sh: Chromium and 16 GB of disk; bench/sample.sh), as it wrote them
    into bench/NAME, or notes written by hand beside them (bench/torch_overhead_notes.md,
    bench/torch_instr_notes.md: the earlier runs and what was read from them), so that a
    regenerated RESULTS.md keeps them."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    if not os.path.exists(path):
        return []
    return open(path).read().rstrip('\n').split('\n') + ['']


def main(argv):
    args = argv[1:]
    save = None
    if len(args) > 1 and args[0] == '--save':
        save, args = args[1], args[2:]
    if not args:
        sys.stderr.write('usage: report.py [--save DIR] WORKDIR...\n')
        return 2
    d = Data(args)
    if save:
        d.save(save)
    P = d.one(sec='parts')
    P = {k: num(v) for k, v in P.items()} if P else None
    L = launch_numbers(d)
    S = size_numbers(d)
    A = analyzer_numbers(d)
    K = stk_numbers(d)
    M = scale_numbers(d, 'mem')
    ML = scale_numbers(d, 'memlive')
    T = scale_numbers(d, 'tl')
    lines = machine(d)
    lines += headline(d, L, S, A, P, K, M, T)
    lines += targets_section(d, L, S, A, P, K, M, T)
    lines += launch_section(d, L, P, S)
    lines += threads_section(d)
    lines += size_section(d, S)
    lines += analyzer_section(d, A)
    lines += stk_section(d, K)
    lines += mem_section(d, M, ML)
    lines += tl_section(d, T)
    lines += saved_section('torch_bridge.md')
    lines += saved_section('torch_overhead.md')
    lines += saved_section('torch_overhead_notes.md')
    instr = saved_section('torch_instr.md') + saved_section('torch_instr_notes.md')
    if instr:
        lines += ['## PyTorch overhead counted in instructions (issue 23, `bench/torch_instr.sh`)', '']
        lines += instr
    lines += saved_section('html_large.md')
    lines += saved_section('sample.md')
    lines += commands_section(d)
    sys.stdout.write('\n'.join(lines))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
