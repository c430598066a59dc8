"""The judgelab command line (typer). Errors a user can cause end in one sentence, not a traceback."""

from __future__ import annotations

import gc
import importlib
import json
import os
import sys
import tempfile
import traceback
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from judgelab.backends.redaction import redact, register_credentials
from judgelab.errors import JudgelabError

__all__ = ["UserError", "app", "friendly", "main"]

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="judgelab: run LLM judges, probe their biases, measure how far they can be trusted.")
rubrics_app = typer.Typer(add_completion=False, no_args_is_help=True, help="List and show rubrics.")
app.add_typer(rubrics_app, name="rubrics")

EMBEDDED_NOTE = (
    "note: local/smollm2 is the embedded SmolLM2-135M plumbing/demo judge; its scores are NOT meaningful. "
    "Use a real model (e.g. --model openai/gpt-4o-mini) for judgments you want to trust."
)

F = TypeVar("F", bound=Callable[..., Any])

# The options `run` and `probe` share, declared once: one flag name, one meaning, one help text everywhere.
RubricOption = Annotated[str, typer.Option(help="Built-in rubric name or a YAML rubric file.")]
DataOption = Annotated[Path, typer.Option(help="Items: JSONL, CSV, TSV or Parquet, with the fields the rubric needs.")]
ModelOption = Annotated[str, typer.Option(help="Any litellm model name, e.g. openai/gpt-4o-mini.")]
ApiBaseOption = Annotated[str | None, typer.Option(help="Base URL of an OpenAI-compatible server.")]
ApiKeyEnvOption = Annotated[str | None, typer.Option(help="Name of the environment variable holding the API key.")]
ConcurrencyOption = Annotated[int, typer.Option(min=1, help="Requests in flight at once.")]
OutOption = Annotated[Path | None, typer.Option(
    help="Folder for judgments.parquet, judgments.jsonl, run.json (and report.html with --report); "
         "default runs/ for run, runs/<probe>/ for probe.")]
RepeatsOption = Annotated[int | None, typer.Option(min=1, help="Samples per request (default 1; the repeats "
                                                              "probe's k).")]
TemperatureOption = Annotated[float | None, typer.Option(help="Sampling temperature (default: the rubric's, else 0).")]
MaxCostOption = Annotated[float | None, typer.Option(help="Stop issuing calls once this many USD would be passed.")]
NoCacheOption = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the request cache.")]
CacheOption = Annotated[Path | None, typer.Option(
    help="Request cache file (default: $JUDGELAB_CACHE or ~/.cache/judgelab).")]
SeedOption = Annotated[int, typer.Option(help="Seed for per-item randomisation and the provider's sampling seed.")]
MaxTokensOption = Annotated[int | None, typer.Option(help="Cap on output tokens per call (default: the rubric's).")]
ReasoningEffortOption = Annotated[str | None, typer.Option(
    "--reasoning-effort", help="Reasoning models: none, minimal, low, medium or high (litellm's reasoning_effort; "
    "part of the cache key). The thinking is stored in the 'reasoning' column, never parsed.")]
ReportOption = Annotated[bool, typer.Option("--report", help="Also write report.html, one self-contained HTML page "
                                                             "(no network), into the --out folder.")]
ParamOption = Annotated[list[str] | None, typer.Option("--param", help="Rubric parameter KEY=VALUE (JSON values "
                                                                      "allowed).")]
DEFAULT_MODEL = "local/smollm2"


class UserError(JudgelabError):
    """An error the user can fix; printed as one sentence."""


def friendly(func: F) -> F:
    """Turn judgelab's own errors (the ones a user causes and can fix) and the machine's (an OSError: a file or
    folder in the way, a full disk) into 'error: <sentence>' on stderr and exit code 2. Any other exception is a
    bug and keeps its traceback."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except typer.Exit:
            raise
        except KeyboardInterrupt:
            typer.echo("interrupted: finished calls are in the cache; rerun the same command to resume", err=True)
            raise typer.Exit(130) from None
        except JudgelabError as exc:
            typer.echo(f"error: {redact(str(exc))}", err=True)
            raise typer.Exit(2) from None
        except OSError as exc:  # the machine's files and folders (a path in the way, a full disk), not a bug
            typer.echo(f"error: {redact(_os_error_sentence(exc))}", err=True)
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


def _os_error_sentence(exc: OSError) -> str:
    """One sentence for an OSError no command turned into its own: what failed, on which path."""
    paths = " -> ".join(str(p) for p in (exc.filename, exc.filename2) if p is not None)
    reason = exc.strerror or str(exc) or type(exc).__name__
    return f"{reason}: {paths}; check that path (free space, a file or folder in the way)" if paths else \
        f"{reason}; check the files and folders the command uses (free space, a file or folder in the way)"


def _check_out_dir(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise UserError(f"the output folder {out} is a file; give a folder (--out FOLDER)")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".write-check-"):
            pass
    except OSError as exc:
        why = ("part of that path is a file, not a folder" if isinstance(exc, FileExistsError | NotADirectoryError)
               else exc.strerror or str(exc))
        raise UserError(f"cannot write to the output folder {out}: {why}; give another folder (--out FOLDER)") from None


def _api_key(api_key_env: str | None) -> str | None:
    if api_key_env is None:
        return None
    value = os.environ.get(api_key_env)
    if not value:
        raise UserError(f"environment variable {api_key_env} (given by --api-key-env) is not set")
    register_credentials(api_key=value)  # a key too short to be masked is refused in one sentence
    return value


def _key_values(pairs: list[str], flag: str) -> dict[str, Any]:
    """KEY=VALUE options; a VALUE that parses as JSON (numbers, lists, true) is taken as JSON."""
    out: dict[str, Any] = {}
    for p in pairs:
        if "=" not in p:
            raise UserError(f"{flag} {p!r} is not KEY=VALUE")
        k, v = p.split("=", 1)
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out


def _run_options(*, api_key: str | None, api_base: str | None, concurrency: int, repeats: int | None,
                 temperature: float | None, max_cost: float | None, no_cache: bool, cache: Path | None, seed: int,
                 max_tokens: int | None, reasoning_effort: str | None = None) -> dict[str, Any]:
    """The shared options as keyword arguments of judgelab.run (and of every probe, which passes them on);
    options left at "not given" are left out, so a probe's own default (the repeats probe's temperature) holds."""
    options: dict[str, Any] = dict(api_base=api_base, api_key=api_key, concurrency=concurrency, seed=seed,
                                   max_cost_usd=max_cost, cache=False if no_cache else (cache or True))
    given = {"repeats": repeats, "temperature": temperature, "max_tokens": max_tokens,
             "reasoning_effort": reasoning_effort}
    return {**options, **{k: v for k, v in given.items() if v is not None}}


def _rubric_source(rubric: str, params: dict[str, Any], data: Path) -> dict[str, Any]:
    """What `judgelab report RUN_DIR` needs to render the prompts again: the rubric as given, its parameters,
    and the items file (absolute, so the report works from another folder)."""
    from judgelab.rubrics import list_rubrics

    ref = rubric if rubric in list_rubrics() else str(Path(rubric).resolve())
    return {"rubric_file": ref, "rubric_params": params, "items_file": str(data.resolve())}


def _report_writer(result: Any, data: Path, rubric: Any) -> Callable[[Path], Path]:
    def write(path: Path) -> Path:
        from judgelab.viz.report import report

        return report(result, path, items=data, rubric=rubric)

    return write


def _write_outputs(table: Any, out: Path, meta: dict[str, Any],
                   report: Callable[[Path], Any] | None = None) -> dict[str, Path]:
    """The table (Parquet and JSONL; its free-text columns are redacted as rows are built), run.json (redacted)
    and the report when asked, as one set: all new, or the folder's previous files untouched
    (:func:`judgelab.engine.run_folder.write_run_folder`)."""
    from judgelab.engine.run_folder import write_run_folder

    return write_run_folder(out, table, meta, report=report)


@app.command()
@friendly
def run(
    rubric: RubricOption,
    data: DataOption,
    model: ModelOption = DEFAULT_MODEL,
    api_base: ApiBaseOption = None,
    api_key_env: ApiKeyEnvOption = None,
    concurrency: ConcurrencyOption = 8,
    out: OutOption = Path("runs"),
    repeats: RepeatsOption = 1,
    temperature: TemperatureOption = None,
    swap: bool = typer.Option(False, "--swap", help="Pairwise: judge both candidate orders."),
    max_cost: MaxCostOption = None,
    no_cache: NoCacheOption = False,
    cache: CacheOption = None,
    seed: SeedOption = 0,
    max_tokens: MaxTokensOption = None,
    reasoning_effort: ReasoningEffortOption = None,
    report: ReportOption = False,
    logprobs: bool = typer.Option(False, "--logprobs", help="Also compute logprob-weighted scores."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Estimate calls, tokens and cost; call nothing."),
    max_retries: int = typer.Option(5, min=0, help="Retries per call on rate limits, 5xx, timeouts, drops."),
    retry_base: float = typer.Option(0.5, min=0.0, help="Backoff base in seconds (full jitter, doubling)."),
    timeout: float = typer.Option(120.0, min=0.1, help="Wall-clock seconds one call may take, the reply's body "
                                  "included (a server that trickles its answer is cut off then); a timed-out call is "
                                  "retried like any timeout."),
    rubric_param: ParamOption = None,
    retry_unscored: bool = typer.Option(False, "--retry-unscored", help="Ask again the requests whose cached "
                                        "answer ended unscored (parse error, refusal, empty); others stay cached."),
    ray: str | None = typer.Option(None, "--ray", metavar="ADDRESS", help="Judge on Ray actors: 'local' (a new "
                                   "local Ray), 'auto' (this machine's cluster) or a cluster address; finished blocks "
                                   "are written under --out/partitions, and a rerun judges only the missing ones. The "
                                   "workers read the key from their own environment (--api-key-env names it)."),
    workers: int = typer.Option(2, "--workers", min=1, help="Ray actors (with --ray), each running --concurrency calls."),
    block_size: int = typer.Option(256, "--block-size", min=1, help="Items per block (with --ray): the unit written "
                                   "and resumed."),
) -> None:
    """Judge every item of --data with --rubric on --model; print ONE JSON summary line on stdout."""
    import judgelab
    from judgelab.engine.runner import RunAborted
    from judgelab.rubrics import load_rubric

    params = _key_values(rubric_param or [], "--param")
    rub = load_rubric(rubric, **params)
    key = _api_key(api_key_env)
    executor = None
    if ray is not None:
        from judgelab.distributed import RayExecutor

        # the key stays in the environment: the workers read it there, no task argument carries it
        executor = RayExecutor(None if ray == "local" else ray, workers=workers, block_size=block_size, out=out,
                               api_key_env=api_key_env)
        key = None
    if model.startswith("local/"):
        typer.echo(EMBEDDED_NOTE, err=True)
    kwargs: dict[str, Any] = dict(
        **_run_options(api_key=key, api_base=api_base, concurrency=concurrency, repeats=repeats,
                       temperature=temperature, max_cost=max_cost, no_cache=no_cache, cache=cache, seed=seed,
                       max_tokens=max_tokens, reasoning_effort=reasoning_effort),
        swap=swap, logprobs=logprobs, max_retries=max_retries, retry_base_s=retry_base, timeout=timeout,
        retry_unscored=retry_unscored,
    )
    if dry_run:
        print(json.dumps(judgelab.estimate(data, rub, model, **kwargs).summary()), flush=True)
        return
    _check_out_dir(out)
    try:
        result = judgelab.run(data, rub, model, return_stats=True, progress=True,
                              **kwargs, **({"executor": executor} if executor is not None else {}))
    except RunAborted as aborted:
        from judgelab.engine.run_folder import RunFolderError

        result = aborted.result
        try:
            _write_outputs(result.table, out, {"model": model, "rubric": rub.name, "aborted": str(aborted)})
        except RunFolderError as unwritten:  # e.g. the disk that filled the cache holds the output folder too
            raise UserError(f"{aborted}; and {unwritten}") from None
        print(json.dumps({**result.stats.summary(), "out": str(out), "aborted": True}), flush=True)
        typer.echo(f"error: {aborted} (every row so far is saved in {out})", err=True)
        raise typer.Exit(1) from None
    meta = {"model": model, "rubric": rub.name, "rubric_version": rub.version, "api_base": api_base,
            "data": str(data), "stats": result.stats.__dict__, **_rubric_source(rubric, params, data)}
    files = _write_outputs(result.table, out, meta, _report_writer(result, data, rub) if report else None)
    written = {"report": str(files["report.html"])} if report else {}
    print(json.dumps({**result.stats.summary(), "out": str(out), **written}), flush=True)


@app.command()
@friendly
def demo(
    out: Annotated[Path, typer.Option(help="Folder for the demo's table, figure and HTML report.")] = Path("runs/demo"),
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Judge, probe for position bias, measure and report, offline on the embedded judge; says what each step shows."""
    from judgelab.studies.demo import run_demo

    _check_out_dir(out)
    result = run_demo(out, cache=False if no_cache else (cache or True), echo=typer.echo)
    print(json.dumps({**result.run.stats.summary(), "out": str(out), "report": str(result.files["report"]),
                      "seconds": round(result.seconds, 1)}), flush=True)


@app.command()
@friendly
def serve(
    port: int = typer.Option(8080, help="Port on 127.0.0.1."),
    host: str = typer.Option("127.0.0.1", help="Loopback address to bind."),
    logprobs: bool = typer.Option(True, "--logprobs/--no-logprobs", help="Keep every prompt token's logits so "
                                  "requests can ask for logprobs (llama-cpp logits_all); --no-logprobs saves the "
                                  "memory and refuses such requests."),
) -> None:
    """Serve the embedded judge through llama.cpp's OpenAI-compatible HTTP server (Ctrl-C stops it)."""
    from judgelab.backends.server import serve_forever

    typer.echo(EMBEDDED_NOTE, err=True)
    serve_forever(port=port, host=host, logprobs=logprobs)


@app.command()
@friendly
def probe(
    name: Annotated[str, typer.Argument(help="Probe: position, length, authority, sycophancy, ...")],
    rubric: RubricOption,
    data: DataOption,
    model: ModelOption = DEFAULT_MODEL,
    api_base: ApiBaseOption = None,
    api_key_env: ApiKeyEnvOption = None,
    concurrency: ConcurrencyOption = 8,
    out: OutOption = None,
    repeats: RepeatsOption = None,
    temperature: TemperatureOption = None,
    max_cost: MaxCostOption = None,
    no_cache: NoCacheOption = False,
    cache: CacheOption = None,
    seed: SeedOption = 0,
    max_tokens: MaxTokensOption = None,
    reasoning_effort: ReasoningEffortOption = None,
    report: ReportOption = False,
    rubric_param: ParamOption = None,
    option: list[str] = typer.Option([], "--option", help="Probe option KEY=VALUE, e.g. --option k=5 (JSON values)."),
) -> None:
    """Run a bias probe; save its table in --out and print its summary (estimates, intervals, n) as ONE JSON line."""
    from judgelab.probes import PROBES, run_probe
    from judgelab.rubrics import load_rubric

    if name not in PROBES:
        raise UserError(f"unknown probe {name!r}; available: {', '.join(sorted(PROBES))}")
    params = _key_values(rubric_param or [], "--param")
    rub = load_rubric(rubric, **params)
    run_kw = _run_options(api_key=_api_key(api_key_env), api_base=api_base, concurrency=concurrency, repeats=repeats,
                          temperature=temperature, max_cost=max_cost, no_cache=no_cache, cache=cache, seed=seed,
                          max_tokens=max_tokens, reasoning_effort=reasoning_effort)
    probe_kw = _key_values(option, "--option")
    if name == "repeats" and "repeats" in run_kw:  # the repeats probe's samples per request are its k
        probe_kw.setdefault("k", run_kw.pop("repeats"))
    twice = sorted(set(run_kw) & set(probe_kw))
    if twice:
        raise UserError(f"{', '.join(twice)} given both as a flag and as --option; give each once")
    if model.startswith("local/"):
        typer.echo(EMBEDDED_NOTE, err=True)
    out = out or Path("runs") / name
    _check_out_dir(out)
    result = run_probe(name, str(data), rub, model, **run_kw, **probe_kw)
    payload = json.loads(result.summary_json())
    files = _write_outputs(result.table, out, {"rubric_version": rub.version, "api_base": api_base,
                                               "data": str(data), **_rubric_source(rubric, params, data), **payload},
                           _report_writer(result, data, rub) if report else None)
    written = {"report": str(files["report.html"])} if report else {}
    print(json.dumps({**payload, "out": str(out), **written}, ensure_ascii=False, separators=(",", ":")), flush=True)


@app.command("report")
@friendly
def report_command(
    source: Annotated[Path, typer.Argument(help="A run or probe folder (judgments.parquet and run.json) or a "
                                                "judgments table file (.parquet or .jsonl).")],
    out: Annotated[Path | None, typer.Option(help="The HTML file to write (default: report.html in the run folder, "
                                                  "or beside the table file).")] = None,
    data: Annotated[Path | None, typer.Option(help="Items file, for item texts and rendered prompts (default: the "
                                                   "one run.json names).")] = None,
    rubric: Annotated[str | None, typer.Option(help="Built-in rubric name or YAML file, to render the prompts "
                                                    "(default: the one run.json names).")] = None,
    max_judgments: Annotated[int, typer.Option(min=1, help="Judgments listed in the searchable table (the counts "
                                                           "and figures use all of them).")] = 2000,
) -> None:
    """Write one self-contained HTML report (no network) of a run, a probe or a table; print ONE JSON line."""
    from judgelab.viz.report import REPORT_FILE, report

    if not source.exists():
        raise UserError(f"{source} does not exist; give a run or probe folder, or a judgments table file")
    target = out or (source / REPORT_FILE if source.is_dir() else source.with_name(REPORT_FILE))
    written = report(source, target, items=data, rubric=rubric, max_judgments=max_judgments)
    print(json.dumps({"report": str(written), "bytes": written.stat().st_size}), flush=True)


@app.command()
@friendly
def reproduce(
    out: Path = typer.Option(Path("figures"), help="Folder for the PNG/PDF figures, sidecar JSONs and CSV tables."),
    data_dir: Path | None = typer.Option(None, help="Data folder (default: $JUDGELAB_DATA_DIR, else download)."),
    n_resamples: int = typer.Option(10_000, min=100, help="Bootstrap resamples per interval (the library default, "
                                    "judgelab.stats.DEFAULT_RESAMPLES; a full reproduce took 1 min 45 s to 3 min 37 s here)."),
    seed: int = typer.Option(0, help="Seed of every resampling."),
    group: list[str] = typer.Option([], help="Only these groups (summeval, llmbar, openqa, variants, corrected, "
                                    "ranking, latent); "
                                    "default all."),
) -> None:
    """Regenerate every figure and table the notebooks show, from data; print ONE JSON summary line."""
    from judgelab.studies.reproduce import reproduce as run_reproduce

    _check_out_dir(out)
    paths = run_reproduce(out, data_dir, n_resamples=n_resamples, seed=seed, groups=tuple(group) or None)
    figures = sorted(p.name for p in paths if p.suffix == ".png")
    tables = sorted(p.name for p in paths if p.suffix == ".csv")
    print(json.dumps({"out": str(out), "figures": len(figures), "tables": len(tables), "files": len(paths)}),
          flush=True)


@rubrics_app.command("list")
@friendly
def rubrics_list() -> None:
    """Names of the built-in rubrics."""
    from judgelab.rubrics import list_rubrics

    for name in list_rubrics():
        typer.echo(name)


@rubrics_app.command("show")
@friendly
def rubrics_show(name: str = typer.Argument(..., help="Built-in rubric name or YAML file.")) -> None:
    """The rubric's spec and a rendered example prompt."""
    from judgelab.rubrics import describe_rubric

    typer.echo(describe_rubric(name))


# What a command imports before its first model call, imported by main() while the collector is off (below).
_PRELOAD = {"run": ("judgelab.engine.runner", "judgelab.rubrics", "pyarrow.parquet"),
            "probe": ("judgelab.engine.runner", "judgelab.rubrics", "judgelab.probes", "pyarrow.parquet")}


def _preload(args: list[str]) -> None:
    """Import the modules the command ``args[0]`` needs with the cyclic garbage collector off, then freeze them.

    The command line is one short process: imports (litellm's alone creates millions of objects) are
    never garbage, yet every full collection during them and during the run walks all of them again,
    and so does the last collection at exit. Frozen (``gc.freeze``), they are skipped: a 400-call
    ``judgelab run`` used 1-2 s less CPU here (benchmarks/bench_engine.py, which also times a bare litellm
    script with and without the same settings). Objects made later are collected as usual.
    """
    modules = _PRELOAD.get(args[0], ()) if args and not {"--help", "-h"} & set(args) else ()
    gc.disable()
    try:
        for module in modules:
            try:
                importlib.import_module(module)
            except ImportError:  # the command meets it again where it needs the module, and says so there
                break
    finally:
        gc.freeze()
        gc.enable()


def main() -> None:
    """The ``judgelab`` command (the console script and ``python -m judgelab.cli``)."""
    try:
        _preload(sys.argv[1:])
        app()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    except Exception:  # a bug: it keeps its traceback, with any key in it masked
        sys.stderr.write(redact(traceback.format_exc()))
        sys.exit(1)
    finally:
        gc.freeze()  # the process ends now: its last collection need not walk what the command built


if __name__ == "__main__":
    main()
