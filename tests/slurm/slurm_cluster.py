"""A private one-node Slurm cluster for the slurm tests (Debian's slurm-wlm 22.05).

    with Cluster() as c:                       # munged, slurmctld, slurmd; node idle
        job = c.sbatch([...], cwd=d, env=...)  # every command gets SLURM_CONF=<ours>
        c.wait_job(job, timeout=120)

Everything lives under one fresh folder in /tmp (short paths: munge's and
slurmstepd's Unix sockets must fit in 108 bytes): a generated munge key,
slurm.conf, state, spool, pid and log files. Nothing reads or writes
/etc/slurm, /etc/munge or a system munge socket: slurm.conf names our munge
socket (AuthInfo=socket=...) and every Slurm command gets SLURM_CONF through
its own environment, never this process's. Ports are picked free at start, so
clusters of tests run in parallel do not meet.

The daemons run in the foreground (-D, -F) as this process's children, so
their process ids are known without pid files. They are stopped by those ids:
on leaving the `with` block, at exit, on SIGTERM/SIGINT/SIGHUP, and, should
this process be killed outright (a ctest timeout), by the kernel
(PR_SET_PDEATHSIG) and by a small reaper process that outlives it. Job
processes (slurmstepd and the job's own) are found by their environment,
which holds our unique SLURM_CONF path, and ended by process id as well.

Runs as root only (SlurmUser=root, munged started as the munge user, with
proctrack/linuxproc and task/affinity: no cgroups and no systemd needed).
`unavailable()` says why a cluster cannot start here, for a clean skip.
"""

import atexit
import ctypes
import grp
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "srun", "scontrol", "sinfo", "squeue", "scancel")
SBIN = ("/usr/sbin", "/usr/bin", "/sbin", "/bin")
PR_SET_PDEATHSIG = 1


def _which(name):
    path = os.pathsep.join([os.environ.get("PATH", ""), *SBIN])
    return shutil.which(name, path=path)


def unavailable():
    """None when a cluster can start here, else one line saying why not."""
    if os.geteuid() != 0:
        return "needs root (slurmd and munged are started as root and the munge user)"
    missing = [n for n in DAEMONS + CLIENTS if not _which(n)]
    if missing:
        return (f"Slurm/munge not installed (missing {' '.join(missing)}): "
                "apt-get install slurm-wlm munge, or run scripts/deps.sh")
    try:
        pwd.getpwnam("munge")
    except KeyError:
        return "no 'munge' user (the munge package creates it)"
    return None


def _free_ports(n):
    socks, ports = [], []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def _mem_mib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    raise RuntimeError("no MemTotal in /proc/meminfo")


def _node_line(slurmd, cpus):
    """The node's CPUs, memory and, when they add up to the CPUs we declare (a
    cpuset-limited container may see fewer CPUs than the board has), its
    sockets, cores and threads as slurmd sees them (`slurmd -C`). Memory is
    the smaller of /proc/meminfo's and slurmd's: a node declaring more than
    slurmd finds is drained."""
    mem = _mem_mib()
    shape = ""
    try:
        out = subprocess.run([slurmd, "-C"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    got = dict(re.findall(r"(\w+)=(\S+)", out))
    try:
        s, c, t = (int(got[k]) for k in ("SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore"))
        if s * c * t == cpus:
            shape = f" Sockets={s} CoresPerSocket={c} ThreadsPerCore={t}"
    except (KeyError, ValueError):
        pass
    if got.get("RealMemory", "").isdigit():
        mem = min(mem, int(got["RealMemory"]))
    return f"CPUs={cpus}{shape} RealMemory={mem}"


def _child_setup(uid=None, gid=None):
    """Runs in the forked child before exec: drop to uid/gid, then ask the
    kernel to SIGTERM the daemon when this process dies (set after the
    credential change, which would clear it)."""
    def setup():
        os.setsid()
        if gid is not None:
            os.setgroups([])
            os.setgid(gid)
        if uid is not None:
            os.setuid(uid)
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    return setup


class ClusterError(RuntimeError):
    pass


class Cluster:
    """A one-node Slurm under a private folder; a context manager."""

    def __init__(self, cpus=None, cred_expire=10, keep=False, log=print):
        self.cpus = len(os.sched_getaffinity(0)) if cpus is None else cpus
        # Seconds a requeued job waits before it may start again (Slurm's
        # default is 120; the tests shorten it, a site keeps its own).
        self.cred_expire = cred_expire
        self.keep = keep
        self.log = log
        self.base = None
        self.reaper = None
        self.procs = {}
        self.partition = "debug"
        self._stopped = False
        self._old_handlers = {}

    # ------------------------------------------------------------ set-up
    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def path(self, *parts):
        return os.path.join(self.base, *parts)

    def start(self):
        why = unavailable()
        if why:
            raise ClusterError(why)
        atexit.register(self.stop)
        for signo in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            self._old_handlers[signo] = signal.signal(signo, self._on_signal)
        self.base = tempfile.mkdtemp(prefix="dslurm.", dir="/tmp")
        os.chmod(self.base, 0o755)  # the munge user enters its own folder below
        for d in ("state", "spool", "log", "run", "etc", "tmp"):
            os.makedirs(self.path(d), mode=0o755)
        self.host = socket.gethostname().split(".")[0]
        self.conf = self.path("etc", "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        for k in list(self.env):  # a caller's Slurm settings would leak in
            if k.startswith(("SLURM_", "SBATCH_", "SRUN_", "SALLOC_", "SQUEUE_")) and k != "SLURM_CONF":
                del self.env[k]
        reaper_env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        self.reaper = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--reap", str(os.getpid()), self.conf, self.base],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=reaper_env, start_new_session=True)
        self._start_munge()
        t0 = time.monotonic()
        for attempt in range(3):
            self._write_conf()
            self._spawn("slurmctld", [_which("slurmctld"), "-D", "-f", self.conf])
            self._spawn("slurmd", [_which("slurmd"), "-D", "-f", self.conf, "-N", self.host])
            try:
                self._wait_idle(60)
                break
            except ClusterError:
                # Free ports are picked, then bound by the daemons: another
                # cluster starting at the same moment may win one. Try others.
                if attempt == 2 or "already in use" not in self.logs("slurmctld") + self.logs("slurmd"):
                    raise
                for name in ("slurmd", "slurmctld"):
                    _end(self.procs.pop(name))
                    if os.path.exists(self.path("log", f"{name}.log")):
                        os.replace(self.path("log", f"{name}.log"), self.path("log", f"{name}.{attempt}.log"))
                shutil.rmtree(self.path("state"))
                os.makedirs(self.path("state"), mode=0o755)
        self.log(f"slurm: one node '{self.host}' ({self.cpus} CPUs) idle {time.monotonic() - t0:.1f} s after "
                 f"start, under {self.base}")

    def _start_munge(self):
        mu = pwd.getpwnam("munge")
        mg = grp.getgrnam("munge").gr_gid if _has_group("munge") else mu.pw_gid
        d = self.path("munge")
        os.makedirs(d)
        os.chmod(d, 0o711)  # munged: the socket folder must be enterable by all
        os.chown(d, mu.pw_uid, mg)
        self.munge_socket = os.path.join(d, "munge.socket")
        key = os.path.join(d, "munge.key")
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(1024))  # munged takes a key of random bytes (32 to 1024)
        os.chown(key, mu.pw_uid, mg)
        argv = [_which("munged"), "-F", "--key-file", key, "--socket", self.munge_socket,
                "--pid-file", os.path.join(d, "munged.pid"), "--log-file", os.path.join(d, "munged.log"),
                "--seed-file", os.path.join(d, "munged.seed"), "--num-threads", "2"]
        self._spawn("munged", argv, uid=mu.pw_uid, gid=mg, cwd=d)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            self._check_alive("munged")
            if os.path.exists(self.munge_socket):
                cred = subprocess.run([_which("munge"), "-n", "-S", self.munge_socket], capture_output=True)
                if cred.returncode == 0 and subprocess.run(
                        [_which("unmunge"), "-S", self.munge_socket], input=cred.stdout,
                        capture_output=True).returncode == 0:
                    return
            time.sleep(0.1)
        raise ClusterError(f"munged did not answer on {self.munge_socket} within 20 s")

    def _write_conf(self):
        ctld_port, slurmd_port = _free_ports(2)
        self.cluster_name = f"dtest{ctld_port}"
        node = _node_line(_which("slurmd"), self.cpus)
        with open(self.path("etc", "plugstack.conf"), "w"):
            pass
        lines = [
            f"ClusterName={self.cluster_name}",
            f"SlurmctldHost={self.host}(127.0.0.1)",  # no name lookup needed
            f"SlurmctldPort={ctld_port}",
            f"SlurmdPort={slurmd_port}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket},cred_expire={self.cred_expire}",
            # Job ids, and so the paths Slurm's pmix plugin and MPI derive
            # from them, differ between clusters running side by side.
            f"FirstJobId={ctld_port * 1000}",
            f"TmpFS={self.path('tmp')}",
            f"StateSaveLocation={self.path('state')}",
            f"SlurmdSpoolDir={self.path('spool')}",
            f"SlurmctldPidFile={self.path('run', 'slurmctld.pid')}",
            f"SlurmdPidFile={self.path('run', 'slurmd.pid')}",
            f"SlurmctldLogFile={self.path('log', 'slurmctld.log')}",
            f"SlurmdLogFile={self.path('log', 'slurmd.log')}",
            f"PlugStackConfig={self.path('etc', 'plugstack.conf')}",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/affinity",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "SchedulerType=sched/backfill",
            # A requeued job starts as soon as its hold (cred_expire) ends, not at the
            # next periodic pass (60 s by default).
            "SchedulerParameters=sched_interval=1,bf_interval=1",
            "MpiDefault=none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "ReturnToService=2",
            "MinJobAge=600",  # finished jobs stay visible to scontrol for the checks
            "KillWait=30",
            "InactiveLimit=0",
            f"NodeName={self.host} NodeAddr=127.0.0.1 {node} State=UNKNOWN",
            f"PartitionName={self.partition} Nodes={self.host} Default=YES MaxTime=INFINITE State=UP",
        ]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def _spawn(self, name, argv, uid=None, gid=None, cwd=None):
        out = open(self.path("log", f"{name}.out"), "wb")
        try:
            self.procs[name] = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=self.env,
                cwd=cwd or self.base, preexec_fn=_child_setup(uid, gid))
        finally:
            out.close()

    def _check_alive(self, name):
        p = self.procs[name]
        if p.poll() is not None:
            raise ClusterError(f"{name} exited with {p.returncode} during start-up:\n{self.logs(name)}")

    def _wait_idle(self, timeout):
        deadline = time.monotonic() + timeout
        state = ""
        while time.monotonic() < deadline:
            for name in ("slurmctld", "slurmd"):
                self._check_alive(name)
            r = self.cmd("sinfo", "-h", "-N", "-o", "%t", check=False)
            state = r.stdout.strip()
            if state == "idle":
                return
            time.sleep(0.25)
        raise ClusterError(f"the node is not idle after {timeout} s (sinfo: {state!r})\n"
                           f"{self.logs('slurmctld')}\n{self.logs('slurmd')}")

    def logs(self, name, lines=30):
        out = []
        for p in (self.path("log", f"{name}.log"), self.path("log", f"{name}.out"),
                  self.path("munge", "munged.log") if name == "munged" else None):
            if p and os.path.exists(p):
                with open(p, errors="replace") as f:
                    tail = f.read().splitlines()[-lines:]
                out.append(f"--- {p} ---\n" + "\n".join(tail))
        return "\n".join(out)

    # ------------------------------------------------------------ commands
    def cmd(self, name, *args, check=True, env=None, cwd=None, timeout=60):
        e = dict(self.env)
        e.update(env or {})
        r = subprocess.run([_which(name), *map(str, args)], capture_output=True, text=True, env=e, cwd=cwd,
                           timeout=timeout)
        if check and r.returncode != 0:
            raise ClusterError(f"{name} {' '.join(map(str, args))}: exit {r.returncode}\n{r.stdout}{r.stderr}")
        return r

    def sbatch(self, args, cwd, env=None):
        """Submit; returns the job id. args: options, then the script and its arguments."""
        r = self.cmd("sbatch", "--parsable", *args, env=env, cwd=cwd)
        return int(r.stdout.strip().split(";")[0])

    def job(self, job_id):
        """scontrol's fields of a job (JobState, ExitCode, Restarts, ...), {} once it is gone."""
        r = self.cmd("scontrol", "-o", "show", "job", job_id, check=False)
        if r.returncode != 0:
            return {}
        return dict(re.findall(r"(\w+)=(\S*)", r.stdout))

    def wait_job(self, job_id, timeout, until=("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
                                                 "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL", "DEADLINE")):
        """Poll until the job's state is one of `until`; returns its fields."""
        deadline = time.monotonic() + timeout
        info = {}
        while time.monotonic() < deadline:
            info = self.job(job_id)
            if info.get("JobState") in until:
                return info
            time.sleep(0.5)
        raise ClusterError(f"job {job_id} not in {until} after {timeout} s: {info.get('JobState')} "
                           f"({info.get('Reason')})\n{self.logs('slurmctld')}")

    # ------------------------------------------------------------ tear-down
    def _on_signal(self, signo, frame):
        self.stop()
        raise KeyboardInterrupt(f"signal {signal.Signals(signo).name}")

    def _our_pids(self):
        return pids_with_conf(self.conf)

    def stop(self):
        if self._stopped or self.base is None:
            return
        self._stopped = True
        for signo, old in self._old_handlers.items():
            signal.signal(signo, old)
        try:
            if self.procs.get("slurmctld") and self.procs["slurmctld"].poll() is None:
                jobs = self.cmd("squeue", "-h", "-o", "%i", check=False, timeout=15).stdout.split()
                if jobs:
                    self.cmd("scancel", *jobs, check=False, timeout=15)
                    deadline = time.monotonic() + 15
                    while time.monotonic() < deadline and self.cmd(
                            "squeue", "-h", "-t", "R,CG", "-o", "%i", check=False, timeout=15).stdout.strip():
                        time.sleep(0.25)
        except (OSError, subprocess.TimeoutExpired):
            pass
        daemons = [n for n in ("slurmd", "slurmctld", "munged") if n in self.procs]
        for name in daemons:
            _end(self.procs[name])
        # Left over after the daemons: step daemons and job processes.
        for pid in self._our_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if not self.keep:
            shutil.rmtree(self.base, ignore_errors=True)
        if self.reaper:
            _end(self.reaper, grace=5)


def pids_with_conf(conf):
    """Processes whose environment holds SLURM_CONF=conf (the daemons, their
    job step daemons and the jobs), this process left out."""
    tag = f"\0SLURM_CONF={conf}\0".encode()
    me = os.getpid()
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if tag in b"\0" + f.read() + b"\0":
                    pids.append(int(entry))
        except OSError:
            pass
    return pids


def _reap(parent, conf, base):
    """The reaper: once `parent` is gone without stopping its cluster, kill
    what is left of it by pid and remove its folder."""
    while os.getppid() == parent:
        time.sleep(0.5)
    for pid in pids_with_conf(conf):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    shutil.rmtree(base, ignore_errors=True)


def _end(proc, grace=10):
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _has_group(name):
    try:
        grp.getgrnam(name)
        return True
    except KeyError:
        return False


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--reap":
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        _reap(int(sys.argv[2]), sys.argv[3], sys.argv[4])
        sys.exit(0)
    # Manual use: start a cluster, print how to reach it, stop on Enter or Ctrl-C.
    why = unavailable()
    if why:
        raise SystemExit(f"slurm_cluster: {why}")
    with Cluster(keep=False) as c:
        print(f"export SLURM_CONF={c.conf}")
        try:
            input("Enter stops the cluster: ")
        except (EOFError, KeyboardInterrupt):
            pass
