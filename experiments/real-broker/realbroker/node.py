"""A private RabbitMQ node for one invocation: its own node name, loopback ports, epmd, data and
log directories and cookie; stopped by pid (TERM, then KILL) and removed at the end."""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from .client import need_pika

LOOPBACK = "127.0.0.1"


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]
    finally:
        s.close()


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child of ours counts as gone
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def advanced_config(settings):
    """advanced.config for the rabbit application settings (integers; the schema of rabbitmq.conf
    does not know dead_letter_worker_publisher_confirm_timeout on 3.10)."""
    for k, v in settings.items():
        if not (k.replace("_", "").isalnum() and k[0].isalpha() and k.islower()) or isinstance(v, bool) \
                or not isinstance(v, int):
            raise ValueError("node setting %r=%r: an Erlang atom and an integer expected" % (k, v))
    return "[{rabbit, [%s]}].\n" % ", ".join("{%s, %d}" % (k, v) for k, v in sorted(settings.items()))


class PrivateBroker:
    """A private RabbitMQ node: own node name, ports, epmd, data/log dirs, cookie (HOME)."""

    def __init__(self, server_script, keep_dir=False, start_timeout_s=120.0, settings=None):
        self.server_script = server_script
        # rabbit application settings for this node (subset.node_settings), in advanced.config
        self.settings = dict(settings or {})
        self.keep_dir = keep_dir
        self.start_timeout_s = start_timeout_s
        self.proc = None
        self.epmd = None
        self.beam_pid = None
        self.dir = None
        self.version = None

    def start(self):
        pika = need_pika()
        self.dir = tempfile.mkdtemp(prefix="brokersim-cmp-")
        d = self.dir
        for sub in ("home", "mnesia", "log", "plugins-expand"):
            os.makedirs(os.path.join(d, sub))
        self.amqp_port, self.dist_port, self.epmd_port = free_port(), free_port(), free_port()
        while len({self.amqp_port, self.dist_port, self.epmd_port}) < 3:
            self.dist_port, self.epmd_port = free_port(), free_port()
        self.nodename = "brokersim-cmp-%d@localhost" % os.getpid()
        with open(os.path.join(d, "rabbitmq.conf"), "w") as f:
            f.write("listeners.tcp.default = %s:%d\n" % (LOOPBACK, self.amqp_port))
            f.write("loopback_users.guest = true\n")
            f.write("log.console = false\n")
            f.write("log.file.level = info\n")
        with open(os.path.join(d, "advanced.config"), "w") as f:
            f.write(advanced_config(self.settings))
        with open(os.path.join(d, "enabled_plugins"), "w") as f:
            f.write("[].\n")
        open(os.path.join(d, "rabbitmq-env.conf"), "w").close()  # do not read /etc/rabbitmq/rabbitmq-env.conf
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RABBITMQ_", "ERL_"))}
        env.update({
            "HOME": os.path.join(d, "home"),  # a private .erlang.cookie
            "RABBITMQ_CONF_ENV_FILE": os.path.join(d, "rabbitmq-env.conf"),
            "RABBITMQ_NODENAME": self.nodename,
            "RABBITMQ_NODE_IP_ADDRESS": LOOPBACK,
            "RABBITMQ_NODE_PORT": str(self.amqp_port),
            "RABBITMQ_DIST_PORT": str(self.dist_port),
            "RABBITMQ_MNESIA_BASE": os.path.join(d, "mnesia"),
            "RABBITMQ_LOG_BASE": os.path.join(d, "log"),
            "RABBITMQ_CONFIG_FILE": os.path.join(d, "rabbitmq.conf"),
            "RABBITMQ_ADVANCED_CONFIG_FILE": os.path.join(d, "advanced.config"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": os.path.join(d, "enabled_plugins"),
            "RABBITMQ_PLUGINS_EXPAND_DIR": os.path.join(d, "plugins-expand"),
            "RABBITMQ_PID_FILE": os.path.join(d, "rabbitmq.pid"),
            "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": "-kernel inet_dist_use_interface {127,0,0,1}",
            "ERL_EPMD_ADDRESS": LOOPBACK,
            "ERL_EPMD_PORT": str(self.epmd_port),
        })
        # Our own epmd, in the foreground (not -daemon), so we hold its pid and stop it ourselves.
        self.epmd_log = open(os.path.join(d, "epmd.log"), "w")
        self.epmd = subprocess.Popen(["epmd", "-address", LOOPBACK, "-port", str(self.epmd_port)],
                                     env=env, stdout=self.epmd_log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 10
        while not self._port_open(self.epmd_port):
            if self.epmd.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("epmd did not start on %s:%d (see %s)" % (LOOPBACK, self.epmd_port, self.epmd_log.name))
            time.sleep(0.05)
        self.stdout = open(os.path.join(d, "rabbitmq-server.out"), "w")
        self.proc = subprocess.Popen([self.server_script], env=env, cwd=d, stdout=self.stdout,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        print("  starting RabbitMQ node %s on %s:%d (dist %d, epmd %d), data in %s"
              % (self.nodename, LOOPBACK, self.amqp_port, self.dist_port, self.epmd_port, d), flush=True)
        t_start = time.monotonic()
        deadline = t_start + self.start_timeout_s
        last_err = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("rabbitmq-server exited with status %s during start-up:\n%s"
                                   % (self.proc.returncode, self._tail()))
            if self._port_open(self.amqp_port):
                try:
                    c = pika.BlockingConnection(self.params(socket_timeout=2))
                    props = getattr(c._impl, "server_properties", {}) or {}
                    v = props.get("version", b"?")
                    self.version = v.decode() if isinstance(v, bytes) else str(v)
                    c.close()
                    self._read_pid()
                    print("  RabbitMQ %s ready after %.1f s (beam pid %s)%s"
                          % (self.version, time.monotonic() - t_start, self.beam_pid,
                             ", settings %s" % self.settings if self.settings else ""), flush=True)
                    return
                except Exception as e:  # not ready yet
                    last_err = e
            time.sleep(0.25)
        raise RuntimeError("RabbitMQ did not accept connections within %.0f s (last error: %r):\n%s"
                           % (self.start_timeout_s, last_err, self._tail()))

    def params(self, socket_timeout=5):
        pika = need_pika()
        return pika.ConnectionParameters(host=LOOPBACK, port=self.amqp_port, heartbeat=0,
                                         connection_attempts=1, socket_timeout=socket_timeout,
                                         blocked_connection_timeout=30)

    def _port_open(self, port):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(0.5)
        try:
            return s.connect_ex((LOOPBACK, port)) == 0
        finally:
            s.close()

    def _read_pid(self):
        try:
            with open(os.path.join(self.dir, "rabbitmq.pid")) as f:
                self.beam_pid = int(f.read().strip())
        except (OSError, ValueError):
            self.beam_pid = None

    def _tail(self, n=40):
        out = []
        for p in (os.path.join(self.dir, "rabbitmq-server.out"),
                  os.path.join(self.dir, "log", self.nodename + ".log")):
            try:
                with open(p, errors="replace") as f:
                    out.append("--- %s\n%s" % (p, "".join(f.readlines()[-n:])))
            except OSError:
                pass
        return "\n".join(out)

    def stop(self):
        """Stop the node by pid (TERM, then KILL), then our epmd. Safe to call twice."""
        if self.proc is not None:
            self._read_pid()
            pids = [p for p in (self.beam_pid, self.proc.pid) if p]
            for p in pids:
                try:
                    os.kill(p, signal.SIGTERM)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
                try:
                    self.proc.wait(timeout=0.2)
                except subprocess.TimeoutExpired:
                    pass
            if any(pid_alive(p) for p in pids):
                try:  # our own session (start_new_session): the script, beam, erl_child_setup
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                for p in pids:
                    try:
                        os.kill(p, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            self.proc = None
            print("  RabbitMQ node stopped", flush=True)
        if self.epmd is not None:
            self.epmd.terminate()
            try:
                self.epmd.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.epmd.kill()
                self.epmd.wait(timeout=5)
            self.epmd = None
        if self.dir and not self.keep_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        elif self.dir:
            print("  broker data and logs kept in", self.dir)
