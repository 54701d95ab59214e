"""A private Slurm cluster of several nodes on one machine (Debian's slurm-wlm 22.05).

    with Nodes(3) as c:                        # munged, slurmctld, 3 slurmd; all idle
        job = c.sbatch([...], cwd=d, env=...)
        c.wait_job(job, timeout=300)
        c.kill_node("node3")                   # SIGKILL its slurmd and job processes, link down
        c.impair_links(20, 1)                  # delay and loss on every link (netem, else iptables + NFQUEUE)

Each node is a process holding its own network, UTS and mount namespaces
(`unshare --net --uts --mount`): its own hostname (node1, node2, ...), its own
address on eth0 (10.77.0.<n>/24), and its own /tmp (a folder of the cluster's
bind-mounted there), so node-local paths are really local, while every other
path (the build, the test's work folder) is the machine's: the cluster's
shared file system. A fourth namespace, the hub, holds a bridge joining the
nodes' veth pairs and the controller's address, 10.77.0.254; slurmctld runs
there, and so do the Slurm commands this class runs (sbatch, squeue, ...).
Every address lives in namespaces made here; nothing is routed to or from the
machine's own network. munged runs beside them and serves every node through
its Unix socket in the cluster's folder (under /var/tmp, not /tmp, so that the
nodes see it). Each slurmd is started inside its node's namespaces with -N.

The cluster's folder, its reaper and its tear-down are those of the one-node
cluster (slurm_cluster.py): daemons and namespace holders are children of this
process, stopped by process id on leaving the `with` block, at exit, on a
signal, or by the reaper should this process be killed; the namespaces vanish
with their last process. `unavailable_nodes()` says why no cluster can start.

impair_links() puts delay and random loss at both ends of every node's link:
tc netem where the kernel has sch_netem; else iptables rules in each node
(a `statistic` match drops, NFQUEUE hands the rest to nfq_delay.py, run in
the node's network namespace, which holds each packet before accepting it).

Slurm notices a dead node after SlurmdTimeout (10 s here; 300 s by default)
and then requeues the node's jobs that allow it (--requeue).
"""

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import slurm_cluster as S  # noqa: E402

SUBNET = "10.77.0"
HUB_ADDR = f"{SUBNET}.254"
TOOLS = ("ip", "unshare", "nsenter", "tc")
DELAYER = os.path.join(HERE, "nfq_delay.py")


def unavailable_nodes():
    """None when a cluster of several nodes can start here, else one line saying why not."""
    why = S.unavailable()
    if why:
        return why
    missing = [t for t in TOOLS if not S._which(t)]
    if missing:
        return f"missing {' '.join(missing)} (apt-get install iproute2 util-linux)"
    r = subprocess.run([S._which("unshare"), "--net", "--", S._which("ip"), "link", "add", "b0", "type", "bridge"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return f"cannot make a network namespace with a bridge here: {r.stderr.strip()}"
    return None


def netem_unavailable():
    """None when `tc qdisc ... netem` works in a namespace, else why not."""
    r = subprocess.run([S._which("unshare"), "--net", "--", S._which("tc"), "qdisc", "add", "dev", "lo", "root",
                        "netem", "delay", "1ms"], capture_output=True, text=True)
    if r.returncode != 0:
        return f"tc netem is not available in this kernel ({r.stderr.strip()}): sch_netem missing"
    return None


def netns_of(pid):
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return None


def shared_under_tmp():
    """The folders right under /tmp that hold this checkout, the working
    folder or a path named on the command line (a clone under /tmp, its
    build and the tests' scratch): every node must see them, as the
    cluster's shared storage, although each node has its own /tmp."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    tops = set()
    for p in [repo, os.getcwd()] + [a for a in sys.argv[1:] if os.path.exists(a)]:
        p = os.path.realpath(p)
        if p.startswith("/tmp/"):
            tops.add("/tmp/" + p[len("/tmp/"):].split("/")[0])
    return sorted(tops)


class Nodes(S.Cluster):
    """`count` nodes of `cpus` CPUs each, in namespaces; a context manager."""

    def __init__(self, count=3, cpus=2, cred_expire=10, slurmd_timeout=10, keep=False, log=print):
        super().__init__(cpus=cpus, cred_expire=cred_expire, keep=keep, log=log)
        self.count = count
        self.slurmd_timeout = slurmd_timeout
        self.names = [f"node{i + 1}" for i in range(count)]
        self.holders = {}  # namespace holder processes: "hub", "node1", ...
        self.killed = set()
        self.impairment = None  # impair_links(): "netem" or "nfqueue"

    def addr(self, name):
        return f"{SUBNET}.{self.names.index(name) + 1}"

    # ------------------------------------------------------------ set-up
    def start(self):
        why = unavailable_nodes()
        if why:
            raise S.ClusterError(why)
        S.atexit.register(self.stop)
        for signo in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            self._old_handlers[signo] = signal.signal(signo, self._on_signal)
        t0 = time.monotonic()
        # Not under /tmp: every node has its own /tmp.
        self.base = tempfile.mkdtemp(prefix="dsn.", dir="/var/tmp")
        os.chmod(self.base, 0o755)
        for d in ("state", "spool", "log", "run", "etc", "nodes"):
            os.makedirs(self.path(d), mode=0o755)
        self.host = "hub"
        self.conf = self.path("etc", "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        for k in list(self.env):
            if k.startswith(("SLURM_", "SBATCH_", "SRUN_", "SALLOC_", "SQUEUE_")) and k != "SLURM_CONF":
                del self.env[k]
        reaper_env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        self.reaper = subprocess.Popen(
            [sys.executable, os.path.abspath(S.__file__), "--reap", str(os.getpid()), self.conf, self.base],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=reaper_env, start_new_session=True)
        self._start_munge()
        self._make_network()
        self._write_conf()
        self._spawn("slurmctld", self._enter("hub", S._which("slurmctld"), "-D", "-f", self.conf))
        for name in self.names:
            self._spawn(f"slurmd.{name}", self._enter(name, S._which("slurmd"), "-D", "-f", self.conf, "-N", name))
        self._wait_idle(60)
        self.start_seconds = time.monotonic() - t0
        self.log(f"slurm: {self.count} nodes ({', '.join(self.names)}; {self.cpus} CPUs each) idle "
                 f"{self.start_seconds:.1f} s after start, under {self.base}")

    def _holder(self, name, *flags, script="exec sleep infinity"):
        p = subprocess.Popen([S._which("unshare"), *flags, "--", "/bin/sh", "-ec", script],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=open(self.path("log", f"{name}.ns.err"), "wb"), env=self.env, cwd=self.base,
                             preexec_fn=S._child_setup())
        self.holders[name] = p
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # the holder is ready once it sleeps
            if p.poll() is not None:
                with open(self.path("log", f"{name}.ns.err"), errors="replace") as f:
                    raise S.ClusterError(f"namespace {name}: exit {p.returncode}: {f.read()}")
            try:
                with open(f"/proc/{p.pid}/comm") as f:
                    if f.read().strip() == "sleep":
                        return p.pid
            except OSError:
                pass
            time.sleep(0.01)
        raise S.ClusterError(f"namespace {name} not ready within 20 s")

    def _enter(self, name, *argv):
        """argv run inside `name`'s namespaces (the hub: network and hostname)."""
        spaces = ["-n", "-u"] if name == "hub" else ["-n", "-u", "-m"]
        return [S._which("nsenter"), "-t", str(self.holders[name].pid), *spaces, "--", *argv]

    def ns_run(self, name, *argv, check=True):
        r = subprocess.run(self._enter(name, *map(str, argv)), capture_output=True, text=True, timeout=30)
        if check and r.returncode != 0:
            raise S.ClusterError(f"{name}: {' '.join(map(str, argv))}: exit {r.returncode}\n{r.stdout}{r.stderr}")
        return r

    def _make_network(self):
        ip = S._which("ip")
        self._holder("hub", "--net", "--uts", script="hostname hub; exec sleep infinity")
        self.ns_run("hub", ip, "link", "set", "lo", "up")
        self.ns_run("hub", ip, "link", "add", "br0", "type", "bridge")
        self.ns_run("hub", ip, "addr", "add", f"{HUB_ADDR}/24", "dev", "br0")
        self.ns_run("hub", ip, "link", "set", "br0", "up")
        shared = shared_under_tmp()
        for name in self.names:
            tmp = self.path("nodes", name, "tmp")
            os.makedirs(tmp)
            os.chmod(tmp, 0o1777)
            # The node's own /tmp; the host's /tmp stays reachable at `host`
            # for the folders of this checkout that lie under /tmp, bound back
            # at their own paths (shared storage, as a cluster's).
            host = self.path("nodes", name, "host-tmp")
            os.makedirs(host)
            back = "".join(f" mkdir -p {shlex.quote(d)}; mount --bind {shlex.quote(os.path.join(host, os.path.relpath(d, '/tmp')))}"
                           f" {shlex.quote(d)};" for d in shared)
            pid = self._holder(name, "--net", "--uts", "--mount", "--propagation", "private",
                               script=f"hostname {name}; mount --bind /tmp {host}; mount --bind {tmp} /tmp;{back}"
                                      " exec sleep infinity")
            self.ns_run("hub", ip, "link", "add", f"v{name}", "type", "veth", "peer", "name", "eth0", "netns",
                        str(pid))
            self.ns_run("hub", ip, "link", "set", f"v{name}", "master", "br0", "up")
            self.ns_run(name, ip, "link", "set", "lo", "up")
            self.ns_run(name, ip, "addr", "add", f"{self.addr(name)}/24", "dev", "eth0")
            self.ns_run(name, ip, "link", "set", "eth0", "up")

    def _write_conf(self):
        node = S._node_line(S._which("slurmd"), self.cpus)
        node = re.sub(r"RealMemory=(\d+)", lambda m: f"RealMemory={max(256, int(m.group(1)) // self.count)}", node)
        self.cluster_name = f"dnodes{os.getpid()}"
        with open(self.path("etc", "plugstack.conf"), "w"):
            pass
        lines = [
            f"ClusterName={self.cluster_name}",
            f"SlurmctldHost=hub({HUB_ADDR})",
            "SlurmctldPort=6817",  # every daemon has its namespace's ports to itself
            "SlurmdPort=6818",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket},cred_expire={self.cred_expire}",
            f"FirstJobId={(os.getpid() % 4000 + 1) * 1000}",
            "TmpFS=/tmp",  # each node's own
            f"StateSaveLocation={self.path('state')}",
            f"SlurmdSpoolDir={self.path('spool', '%n')}",
            f"SlurmctldPidFile={self.path('run', 'slurmctld.pid')}",
            f"SlurmdPidFile={self.path('run', 'slurmd.%n.pid')}",
            f"SlurmctldLogFile={self.path('log', 'slurmctld.log')}",
            f"SlurmdLogFile={self.path('log', 'slurmd.%n.log')}",
            f"PlugStackConfig={self.path('etc', 'plugstack.conf')}",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/affinity",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "SchedulerType=sched/backfill",
            "SchedulerParameters=sched_interval=1,bf_interval=1",
            "MpiDefault=none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "ReturnToService=2",
            "MinJobAge=600",
            "KillWait=5",  # seconds from SIGTERM to SIGKILL when a job ends (a site keeps its own)
            "InactiveLimit=0",
            # A node that stops answering is DOWN after this many seconds
            # (its jobs requeued when they allow it).
            f"SlurmdTimeout={self.slurmd_timeout}",
            "MessageTimeout=5",
            *[f"NodeName={n} NodeAddr={self.addr(n)} NodeHostname={n} {node} State=UNKNOWN" for n in self.names],
            f"PartitionName={self.partition} Nodes={','.join(self.names)} Default=YES MaxTime=INFINITE State=UP",
        ]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def _wait_idle(self, timeout):
        deadline = time.monotonic() + timeout
        got = ""
        while time.monotonic() < deadline:
            for name, p in self.procs.items():
                if name != "munged" and p.poll() is not None:
                    raise S.ClusterError(f"{name} exited with {p.returncode} during start-up:\n"
                                         f"{self.logs(name.split('.')[0])}")
            r = self.cmd("sinfo", "-h", "-N", "-o", "%N %t", check=False)
            got = r.stdout.strip()
            states = dict(line.split() for line in got.splitlines() if len(line.split()) == 2)
            if all(states.get(n) == "idle" for n in self.names):
                return
            time.sleep(0.25)
        raise S.ClusterError(f"nodes not idle after {timeout} s (sinfo: {got!r})\n{self.logs('slurmctld')}")

    def logs(self, name, lines=30):
        if name != "slurmd":
            return super().logs(name, lines)
        out = []
        for n in self.names:
            for p in (self.path("log", f"slurmd.{n}.log"), self.path("log", f"slurmd.{n}.out")):
                if os.path.exists(p):
                    with open(p, errors="replace") as f:
                        out.append(f"--- {p} ---\n" + "\n".join(f.read().splitlines()[-lines:]))
        return "\n".join(out)

    # ------------------------------------------------------------ commands
    def cmd(self, name, *args, check=True, env=None, cwd=None, timeout=60):
        """A Slurm command, run in the hub's network namespace (it reaches slurmctld there)."""
        e = dict(self.env)
        e.update(env or {})
        argv = self._enter("hub", S._which(name), *map(str, args))
        r = subprocess.run(argv, capture_output=True, text=True, env=e, cwd=cwd, timeout=timeout)
        if check and r.returncode != 0:
            raise S.ClusterError(f"{name} {' '.join(map(str, args))}: exit {r.returncode}\n{r.stdout}{r.stderr}")
        return r

    def node_states(self):
        r = self.cmd("sinfo", "-h", "-N", "-o", "%N %t", check=False)
        return dict(line.split() for line in r.stdout.splitlines() if len(line.split()) == 2)

    def pids_on(self, name):
        """Processes in the node's network namespace (slurmd, step daemons, the
        job's), its namespace holder left out."""
        holder = self.holders[name].pid
        ns = netns_of(holder)
        out = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) != holder and netns_of(entry) == ns:
                out.append(int(entry))
        return out

    def node_of(self, pid):
        ns = netns_of(pid)
        for name in self.names:
            if netns_of(self.holders[name].pid) == ns:
                return name
        return None

    def kill_node(self, name):
        """The node dies: SIGKILL to its slurmd and every process of the job on
        it, then its link goes down. Returns the pids killed."""
        victims = self.pids_on(name)
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.procs[f"slurmd.{name}"].wait(10)
        self.ns_run(name, S._which("ip"), "link", "set", "eth0", "down")
        self.killed.add(name)
        return victims

    def shape_links(self, *qdisc):
        """`tc qdisc add dev eth0 root <qdisc...>` on every node's link (each
        direction leaves through one node's eth0 or the hub's veth)."""
        for name in self.names:
            self.ns_run(name, S._which("tc"), "qdisc", "add", "dev", "eth0", "root", *qdisc)
            self.ns_run("hub", S._which("tc"), "qdisc", "add", "dev", f"v{name}", "root", *qdisc)

    def impair_links(self, delay_ms=20, loss_pct=1):
        """Delay and random loss at both ends of every node's link: a packet
        from one node to another is delayed twice (2 x delay_ms) and meets
        two chances of loss. tc netem where the kernel has it; else, in each
        node, iptables rules on eth0 (in and out): `statistic` drops loss_pct
        of the packets, the rest go to NFQUEUE 0, where nfq_delay.py holds
        each delay_ms before accepting it. Returns how, in words."""
        self.impairment = "netem" if netem_unavailable() is None else "nfqueue"
        if self.impairment == "netem":
            self.shape_links("netem", "delay", f"{delay_ms}ms", "loss", f"{loss_pct}%")
            return f"tc netem delay {delay_ms}ms loss {loss_pct}% on both ends of every link"
        ipt = S._which("iptables")
        if not ipt:
            raise S.ClusterError("no sch_netem and no iptables for delay and loss (apt-get install iptables)")
        for name in self.names:
            self._spawn(f"delay.{name}", self._enter(name, sys.executable, "-u", DELAYER, "0", str(delay_ms)))
        for name in self.names:
            log = self.path("log", f"delay.{name}.out")
            deadline = time.monotonic() + 20
            while not (os.path.exists(log) and "ready" in open(log, errors="replace").read()):
                if self.procs[f"delay.{name}"].poll() is not None or time.monotonic() > deadline:
                    raise S.ClusterError(f"nfq_delay.py in {name} did not start:\n"
                                         f"{open(log, errors='replace').read() if os.path.exists(log) else ''}")
                time.sleep(0.02)
            for chain, way in (("OUTPUT", "-o"), ("INPUT", "-i")):
                self.ns_run(name, ipt, "-A", chain, way, "eth0", "-m", "statistic", "--mode", "random",
                            "--probability", f"{loss_pct / 100:.4f}", "-j", "DROP")
                self.ns_run(name, ipt, "-A", chain, way, "eth0", "-j", "NFQUEUE", "--queue-num", "0",
                            "--queue-bypass")
        return (f"iptables on both ends of every link: statistic random drop {loss_pct}%, NFQUEUE to nfq_delay.py "
                f"{delay_ms} ms (no sch_netem)")

    def link_drops(self):
        """Packets the links' loss has dropped so far (netem's or iptables' counters)."""
        total = 0
        for name in self.names:
            if self.impairment == "netem":
                for where, dev in ((name, "eth0"), ("hub", f"v{name}")):
                    out = self.ns_run(where, S._which("tc"), "-s", "qdisc", "show", "dev", dev).stdout
                    total += sum(int(n) for n in re.findall(r"dropped (\d+)", out))
            else:
                out = self.ns_run(name, S._which("iptables"), "-n", "-v", "-x", "-L").stdout
                total += sum(int(line.split()[0]) for line in out.splitlines()
                             if len(line.split()) > 2 and line.split()[2] == "DROP")
        return total

    def ping_ms(self, src, dst, count=10):
        """Round-trip times (ms) of `count` pings from node src to node dst
        (those answered), user to user (-U): the kernel's receive time stamp
        comes before the INPUT hook's delay."""
        r = self.ns_run(src, S._which("ping"), "-U", "-n", "-c", count, "-i", "0.05", "-W", "5", self.addr(dst),
                        check=False)
        return [float(t) for t in re.findall(r"time=([0-9.]+) ms", r.stdout)]

    # ------------------------------------------------------------ tear-down
    def stop(self):
        if self._stopped or self.base is None:
            return
        self._stopped = True
        t0 = time.monotonic()
        for signo, old in self._old_handlers.items():
            signal.signal(signo, old)
        try:
            if self.procs.get("slurmctld") and self.procs["slurmctld"].poll() is None:
                jobs = self.cmd("squeue", "-h", "-o", "%i", check=False, timeout=15).stdout.split()
                if jobs:
                    self.cmd("scancel", *jobs, check=False, timeout=15)
        except (OSError, subprocess.TimeoutExpired):
            pass
        # Job processes first (by our SLURM_CONF in their environment), then
        # the daemons and namespace holders.
        for pid in self._our_pids():
            if pid not in {p.pid for p in [*self.procs.values(), *self.holders.values()]}:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for name in [n for n in self.procs if n.startswith(("slurmd", "delay."))] + ["slurmctld", "munged"]:
            if name in self.procs:
                S._end(self.procs[name], grace=5)
        for p in self.holders.values():
            S._end(p, grace=5)
        for pid in self._our_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if not self.keep:
            shutil.rmtree(self.base, ignore_errors=True)
        if self.reaper:
            S._end(self.reaper, grace=5)
        self.stop_seconds = time.monotonic() - t0
        self.log(f"slurm: {self.count} nodes stopped in {self.stop_seconds:.1f} s")


if __name__ == "__main__":
    # Manual use: start a cluster, print how to reach it, stop on Enter or Ctrl-C.
    why = unavailable_nodes()
    if why:
        raise SystemExit(f"slurm_nodes: {why}")
    with Nodes(int(sys.argv[1]) if len(sys.argv) > 1 else 3) as c:
        print(f"export SLURM_CONF={c.conf}; nsenter -t {c.holders['hub'].pid} -n sinfo")
        try:
            input("Enter stops the cluster: ")
        except (EOFError, KeyboardInterrupt):
            pass
