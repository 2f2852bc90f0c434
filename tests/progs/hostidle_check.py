"""GPU idle time by host activity (issue 20 part 3) from `gputrace-report --json`: device 0's
idle_by_host_site names the function the host was in, with its class and on/off CPU split.
Usage: hostidle_check.py REPORT.json FUNCTION CLASS on|off"""
import json
import sys

path, func, cls, cpu = sys.argv[1:5]
dev = json.load(open(path))["timeline"]["devices"][0]
sites, by_class = dev["idle_by_host_site"], dev["idle_by_class"]
idle = sum(by_class.values())
mine = [s for s in sites if s["site"] and s["site"].startswith(func + " (") and s["class"] == cls]
got = sum(s["idle_ns"] for s in mine)
on = sum(s["on_cpu_ns"] for s in mine)
off = sum(s["off_cpu_ns"] for s in mine)
bad = []
if not idle or abs(idle - sum(s["idle_ns"] for s in sites)) > len(sites):
    bad.append("idle_by_class (%d) and the sites' sum differ" % idle)
# the loop idles the GPU 3 x 30 ms in FUNCTION: at least 80% of the idle time is there
if got < 0.8 * idle:
    bad.append("%s/%s holds %.1f ms of %.1f ms idle" % (func, cls, got / 1e6, idle / 1e6))
if (on if cpu == "on" else off) < 0.9 * got:
    bad.append("%s: on CPU %.1f ms, off CPU %.1f ms, want mostly %s" % (func, on / 1e6, off / 1e6,
                                                                     cpu))
if by_class[cls] < got:
    bad.append("idle_by_class[%s] %d < %d" % (cls, by_class[cls], got))
if mine and not any(func in f for f in mine[0]["frames"]):
    bad.append("frames do not show %s" % func)
print("%s: %s %.1f of %.1f ms idle (on CPU %.1f, off %.1f)" % (func, cls, got / 1e6, idle / 1e6,
                                                            on / 1e6, off / 1e6))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
