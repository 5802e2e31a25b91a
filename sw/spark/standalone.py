"""A Spark standalone cluster on this machine: a master and workers started from the pyspark package
(``spark-class org.apache.spark.deploy.master.Master`` / ``...worker.Worker``) on 127.0.0.1, each worker in
its own work folder and process group, so that one can be killed with everything it started
(bench/cluster.py; tests/test_sw_sim_boardsim.py's workers advertising simulated boards to ``resource:fpga``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Self

__all__ = ["Cluster", "free_ports"]


def _spark_class() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "bin" / "spark-class"


def free_ports(count: int) -> list[int]:
    """``count`` distinct ports free on 127.0.0.1 now: each is held until all are chosen, so two calls in a
    row cannot hand out the same port (a worker's web UI once took the master's, whose ``/json/`` then
    answered with the worker's page)."""
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]


class Cluster:
    """A standalone master and ``workers`` workers of ``cores`` cores on 127.0.0.1, stopped on exit.

    ``worker_conf``: Spark properties every worker starts with (``--properties-file``: its resources, such
    as ``spark.worker.resource.fpga.*``); ``worker_env``: each worker's extra environment, one mapping per
    worker (what its discovery script reads, such as ``SFDF_FPGA_PORTS``).
    """

    def __init__(self, folder: Path, workers: int = 2, cores: int = 1, worker_conf: dict[str, str] | None = None,
                 worker_env: list[dict[str, str]] | None = None):
        self.folder, self.count, self.cores = folder, workers, cores
        self.worker_conf, self.worker_env = worker_conf or {}, worker_env or [{}] * workers
        self.port, self.ui, *self.worker_uis = free_ports(2 + workers)
        self.url = f"spark://127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen] = []

    def _start(self, name: str, *args: str, extra_env: dict[str, str] | None = None) -> subprocess.Popen:
        env = {**os.environ, **(extra_env or {}), "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
               "SPARK_LOG_DIR": str(self.folder / "logs"), "SPARK_HOME": str(_spark_class().parent.parent)}
        log = open(self.folder / f"{name}.log", "w")  # noqa: SIM115 (kept open for the process)
        proc = subprocess.Popen([str(_spark_class()), *args], stdout=log, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
        self.procs.append(proc)
        return proc

    def __enter__(self) -> Self:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(self.port), "--webui-port", str(self.ui))
        properties = self.folder / "worker.properties"
        properties.write_text("".join(f"{key} {value}\n" for key, value in self.worker_conf.items()))
        self.workers = [self._start(f"worker{k}", "org.apache.spark.deploy.worker.Worker", self.url,
                                    "--host", "127.0.0.1", "--cores", str(self.cores), "--memory", "3g",
                                    "--webui-port", str(self.worker_uis[k]), "--properties-file", str(properties),
                                    "--work-dir", str(self.folder / f"worker{k}"), extra_env=self.worker_env[k])
                        for k in range(self.count)]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.ui}/json/", timeout=2) as page:
                    alive = [w for w in json.load(page)["workers"] if w["state"] == "ALIVE"]
                if len(alive) == self.count:
                    return self
            except (OSError, ValueError, KeyError):  # not up yet, or not the master's page
                pass
            time.sleep(1)
        raise RuntimeError(f"the cluster did not come up: see {self.folder}")

    def kill_worker(self, k: int) -> None:
        """SIGKILL worker ``k`` with everything it started (its executor and Python workers)."""
        os.killpg(self.workers[k].pid, signal.SIGKILL)

    def __exit__(self, *exc) -> None:
        for proc in reversed(self.procs):
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for proc in self.procs:
            proc.wait(timeout=30)
