"""bench/verdicts.py - the verdict line of a target measured against an A/A
control, and the ratios such a line is drawn from, shared by bench/paired.sh
and bench/latency.sh.

A service's verdict: met at or under the limit (at or above it for a
throughput ratio), unless the median of its A/A control is itself further
from 1 than the limit allows (the same server twice differed by more than
the target: the method cannot tell a met target there, as nginx's saturated
pairs); past the limit, "not resolved" while the median stays inside the
range its A/A control spread over in the same run (the method cannot tell
it from noise), else missed. Shared by bench/services.sh too."""


import statistics


def verdict_line(what, rows, limit, aa, vfmt, higher=False):
    """rows: (service, median value); aa: service -> (the A/A control's
    median, its highest value; with higher, its lowest); vfmt: how a value
    is printed; higher: the value must stay at or above limit (a throughput
    ratio), not at or under it. Prints one Markdown line."""
    groups = {"met": [], "not resolved": [], "missed": []}
    for svc, v in rows:
        med, edge = aa.get(svc, (None, None))
        if v is None:
            groups["missed"].append("%s n/a" % svc)
            continue
        if (v >= limit) if higher else (v <= limit):
            blind = med is not None and abs(med - 1) > abs(limit - 1)
            k, note = ("not resolved", " (A/A median %s)" % (vfmt % med)) if blind else ("met", "")
        elif edge is not None and ((v >= edge) if higher else (v <= edge)):
            k, note = "not resolved", " (A/A %s %s)" % ("down to" if higher else "up to", vfmt % edge)
        else:
            k, note = "missed", ""
        groups[k].append("%s %s%s" % (svc, vfmt % v, note))
    overall = "missed" if groups["missed"] else "not resolved" if groups["not resolved"] else "met"
    print("- %s: **%s** (%s)" % (what, overall, "; ".join("%s: %s" % (k, ", ".join(g)) for k, g in groups.items() if g)))


class AARatios:
    """Per-round B/A ratios of each service's pairs, against a limit: the
    off:off2 pair (the same server twice) gives the noise floor, off:dial9
    the verdict. Used for CPU per request (1.01) and for p99 (1.02)."""

    def __init__(self, floor_label, limit, vfmt):
        self.floor_label, self.limit, self.vfmt = floor_label, limit, vfmt
        self.verdict, self.floor = [], []

    def cell(self, svc, pair, ratio, bold=False):
        """ratio: the pair's per-round B/A (not empty). Notes it, and returns
        "median (min-max)", the median in bold when asked."""
        f = self.vfmt
        m, lo, hi = statistics.median(ratio), min(ratio), max(ratio)
        if pair == "off:dial9":
            self.verdict.append((svc, m))
        elif pair == "off:off2":
            self.floor.append((svc, "%s (%s-%s)" % (f % m, f % lo, f % hi), m, hi))
        return "%s (%s-%s)" % (("**%s**" if bold else "%s") % (f % m), f % lo, f % hi)

    def summary(self, what):
        """Prints the noise floor, then the verdict line of what."""
        if self.floor:
            print("- %s: " % self.floor_label + ", ".join("%s %s" % v[:2] for v in self.floor))
        if self.verdict and not self.floor:
            print("- %s: no verdict (these rounds ran no off:off2 pair, the floor a verdict is read against)" % what)
        elif self.verdict:
            verdict_line(what, self.verdict, self.limit, {v[0]: v[2:] for v in self.floor}, self.vfmt)


def cost_ratios():
    """AARatios of CPU per request: ratio <= 1.01, four decimals."""
    return AARatios("noise floor (off:off2, the same server twice)", 1.01, "%.4f")


def p99_ratios():
    """AARatios of p99 latency: ratio <= 1.02, three decimals."""
    return AARatios("p99 noise floor (off:off2)", 1.02, "%.3f")


def rounds_below(ratio):
    """"k of n": the rounds in which B cost less than A."""
    return "%d of %d" % (sum(1 for x in ratio if x < 1), len(ratio))
