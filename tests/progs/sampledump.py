"""The host-sample checks' reader of `gputrace-report --dump` output: the stack trie (STACK),
symbol names (SYMBOL), Python code objects (PYCODE) and the samples (HOST_SAMPLE). Used by
hostsample_check.py, codefree_check.py and the hostsample_* cases (which add tests/progs to
sys.path through $SRC)."""
import collections
import re

Sample = collections.namedtuple("Sample", "tid ts interval cpu stack flags")


class Dump:
    def __init__(self, path):
        self.parent, self.ip, self.syms, self.codes, self.samples = {}, {}, [], {}, []
        for line in open(path):
            m = re.search(r" STACK - first=(\d+) parent=(\d+) count=\d+ ips=(\S+)", line)
            if m:
                node, par = int(m.group(1)), int(m.group(2))
                for a in m.group(3).split(","):
                    self.parent[node], self.ip[node] = par, int(a, 16)
                    par, node = node, node + 1
                continue
            m = re.search(r" SYMBOL - addr=0x([0-9a-f]+) size=(\d+) name=\"([^\"]*)\"", line)
            if m:
                self.syms.append((int(m.group(1), 16), int(m.group(2)), m.group(3)))
                continue
            m = re.search(r' PYCODE - id=(\d+) first_line=(\d+) file="([^"]*)" name="([^"]*)"',
                          line)
            if m:
                self.codes[int(m.group(1))] = (int(m.group(2)), m.group(3), m.group(4))
                continue
            m = re.search(r" HOST_SAMPLE - tid=(\d+) sample_ts=(\d+) interval_ns=(\d+) "
                          r"cpu_ns=(\d+) stack=(\d+) flags=(\S+)", line)
            if m:
                self.samples.append(Sample(int(m.group(1)), int(m.group(2)), int(m.group(3)),
                                           int(m.group(4)), int(m.group(5)),
                                           m.group(6).split(",")))

    def names(self, node):
        """The symbol names of a stack's native frames, innermost first."""
        out = []
        while node:
            a = self.ip[node]
            out += [n for lo, sz, n in self.syms if lo <= a < lo + sz]
            node = self.parent[node]
        return out

    def innermost_python(self, node):
        """((first_line, file, name) or None, line) of a stack's innermost Python frame."""
        while node:
            a = self.ip[node]
            if a >> 56 == 0x80:
                return self.codes.get((a >> 24) & 0xffffffff), a & 0xffffff
            node = self.parent[node]
        return None, 0
