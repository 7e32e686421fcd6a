"""Kafka's jars, ``javac`` and long-lived JVMs that answer JSON lines.

``kafka/pom.xml`` copies Apache Kafka's jars from Maven Central into ``.kafka/`` beside the
repository (``make kafka``):

- ``.kafka/lib``: Kafka 4.2.x broker, tools, Kafka Streams, Connect runtime, their dependencies;
- ``.kafka/lib-gc``: the group coordinator of the newest line (KIP-1071 ``StickyTaskAssignor``);
- ``.kafka/lib-next``: Kafka Streams 4.3 (offsets kept in the store, KIP-1035).
- ``.kafka/lib-44``: Kafka 4.4.0 broker, tools, Kafka Streams and their dependencies
  (``kafka/lib-44/pom.xml``), for streams groups.

:class:`JavaBatch` keeps one JVM running and exchanges one JSON document per line over its
standard input and output, so JVM start-up is paid once for many requests.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from devtools.paths import REPO
from streams_assign.errors import StreamsAssignError

__all__ = [
    "JavaBatch",
    "JavaError",
    "KafkaJarsMissingError",
    "classpath",
    "compile_java",
    "java_executable",
    "kafka_home",
    "kafka_lib",
]

#: Environment variable that points at another ``.kafka`` folder (for installed packages).
KAFKA_HOME_ENV = "STREAMS_ASSIGN_KAFKA_HOME"


class KafkaJarsMissingError(StreamsAssignError, FileNotFoundError):
    """Kafka's jars (or a JDK) are not where the project fetches them; run ``make kafka``."""


class JavaError(StreamsAssignError, RuntimeError):
    """A JVM started by these helpers failed (compile error, crash, or a malformed answer)."""


def kafka_home() -> Path:
    """The folder holding ``lib/``, ``lib-gc/`` and ``lib-next/`` (``<repo>/.kafka`` by default).

    ``$STREAMS_ASSIGN_KAFKA_HOME`` overrides it.
    """
    override = os.environ.get(KAFKA_HOME_ENV)
    if override:
        return Path(override)
    return REPO / ".kafka"


def kafka_lib(kind: str = "lib") -> Path:
    """The jar folder ``.kafka/<kind>``.

    Raises
    ------
    KafkaJarsMissingError
        When the folder holds no jar: Maven Central was not reached or ``make kafka`` not run.
    """
    folder = kafka_home() / kind
    if not any(folder.glob("*.jar")):
        raise KafkaJarsMissingError(
            f"no Kafka jars in {folder}: run `make kafka` (fetches Apache Kafka from Maven "
            "Central through kafka/pom.xml; it fails if Maven Central cannot be reached)"
        )
    return folder


def classpath(*kinds: str, extra: Iterable[Path] = ()) -> str:
    """A Java class path: the given folders first, then every jar of each ``.kafka/<kind>``.

    The order matters where two folders hold different versions of one class (``lib`` and
    ``lib-gc``): the JVM takes the first.
    """
    parts = [str(p) for p in extra]
    parts += [str(kafka_lib(kind) / "*") for kind in (kinds or ("lib",))]
    return os.pathsep.join(parts)


def tmpdir_option() -> str:
    """The JVM option ``-Djava.io.tmpdir=<folder>`` naming this process's temp folder.

    A JVM does not read ``TMPDIR``; this passes :func:`tempfile.gettempdir` (``TMPDIR`` when
    set, e.g. the test session's own folder) on, so what a JVM unpacks there (native
    libraries of compression codecs or RocksDB) lands where this process's temp files do.
    """
    return f"-Djava.io.tmpdir={tempfile.gettempdir()}"


def java_executable(tool: str = "java") -> str:
    """Path of ``java`` or ``javac`` (``$JAVA_HOME/bin`` first, then ``PATH``).

    Raises
    ------
    KafkaJarsMissingError
        When no such program is found (``scripts/ensure-java.sh`` installs a JDK).
    """
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / tool).exists():
        return str(Path(home) / "bin" / tool)
    found = shutil.which(tool)
    if found is None:
        raise KafkaJarsMissingError(f"no `{tool}` on PATH: run scripts/ensure-java.sh")
    return found


def compile_java(sources: Path, out: Path, cp: str) -> Path:
    """Compile every ``*.java`` under ``sources`` into ``out`` unless ``out`` is newer.

    Parameters
    ----------
    sources:
        Folder of Java sources (searched recursively).
    out:
        Folder for the class files; recompiled when any source is newer than its stamp.
    cp:
        Class path to compile against (see :func:`classpath`).

    Returns
    -------
    Path
        ``out``, ready to put first on a class path.

    Raises
    ------
    JavaError
        When ``javac`` fails; the message carries its diagnostics.
    """
    files = sorted(sources.rglob("*.java"))
    if not files:
        raise JavaError(f"no Java sources under {sources}")
    stamp = out / ".compiled"
    newest = max(f.stat().st_mtime for f in files)
    if stamp.exists() and stamp.stat().st_mtime >= newest and stamp.read_text() == cp:
        return out
    out.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [java_executable("javac"), "-encoding", "UTF-8", "-nowarn", "-cp", cp, "-d", str(out)]
        + [str(f) for f in files],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise JavaError(f"javac failed on {sources}:\n{result.stderr[-4000:]}")
    stamp.write_text(cp)
    return out


class JavaBatch:
    """One JVM that answers one JSON line for each JSON line it is sent.

    The Java side reads documents from standard input, one per line, and writes exactly one
    line of JSON per document to standard output; it logs to standard error only. The JVM is
    started on ``__enter__`` (or :meth:`start`) and stopped on ``__exit__`` (or :meth:`close`),
    also when the block raises.

    Parameters
    ----------
    main_class:
        Fully qualified name of the Java main class.
    cp:
        Its class path (see :func:`classpath`).
    jvm_args:
        Extra JVM options; ``-Xmx512m`` by default. ``java.io.tmpdir`` is set to
        :func:`tempfile.gettempdir` (``TMPDIR``, which a JVM ignores), before these.
    args:
        Program arguments.

    Raises
    ------
    JavaError
        From :meth:`request` when the JVM has exited or answers something that is not JSON;
        the message carries the tail of its standard error.
    """

    def __init__(
        self,
        main_class: str,
        cp: str,
        jvm_args: Sequence[str] = ("-Xmx512m",),
        args: Sequence[str] = (),
    ) -> None:
        self.command = [java_executable(), tmpdir_option(), *jvm_args, "-cp", cp, main_class, *args]
        self._process: subprocess.Popen[str] | None = None
        self._stderr: list[str] = []
        self._drain: threading.Thread | None = None

    def start(self) -> JavaBatch:
        """Start the JVM (idempotent)."""
        if self._process is None:
            self._process = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                bufsize=1,
            )
            stderr = self._process.stderr
            assert stderr is not None
            self._drain = threading.Thread(target=self._drain_stderr, args=(stderr,), daemon=True)
            self._drain.start()
        return self

    def _drain_stderr(self, stream: Any) -> None:
        for line in stream:
            self._stderr.append(line)
            del self._stderr[:-200]

    def request(self, document: Any) -> Any:
        """Send one JSON document and return the JVM's parsed one-line answer."""
        process = self.start()._process
        assert process is not None and process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(json.dumps(document, separators=(",", ":")) + "\n")
            process.stdin.flush()
        except BrokenPipeError:
            raise JavaError(self._failure("the JVM has exited")) from None
        line = process.stdout.readline()
        if not line:
            process.wait(timeout=10)
            raise JavaError(self._failure(f"the JVM exited with status {process.returncode}"))
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            raise JavaError(self._failure(f"not JSON from the JVM: {line[:200]!r}")) from None

    def _failure(self, what: str) -> str:
        tail = "".join(self._stderr[-40:])
        return f"{' '.join(self.command[-1:])}: {what}; stderr:\n{tail}"

    def close(self) -> None:
        """Close the JVM's input and wait for it; kill it if it does not exit within 10 s."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            if process.stdin is not None:
                process.stdin.close()
            process.wait(timeout=10)
        except (subprocess.TimeoutExpired, BrokenPipeError, OSError):
            process.kill()
            process.wait()
        finally:
            if process.stdout is not None:
                process.stdout.close()

    def __enter__(self) -> JavaBatch:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
