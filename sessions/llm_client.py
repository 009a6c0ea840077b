"""One way to talk to an OpenAI-compatible chat endpoint, shared by the agent connector,
the user simulator, the tau-Voice policy and the prompt audit.

The ``openai`` package is imported only when a client is first built. The client's own
retries are switched off (``max_retries=0``) and done here instead, so every retry is
counted and visible: timeouts, connection errors and HTTP 408/409/429/5xx are retried
with exponential backoff (a server's ``Retry-After`` is honoured, capped), at most
``max_retries`` times; then :class:`LLMError` is raised. A stream is retried only before
its first chunk: once text has been spoken it cannot be taken back.

The endpoint may carry user info and a query (``http://u:pw@host/v1?api_key=K``): the
query is sent with every request (``default_query``), as gateways expect. Error
messages name the endpoint only as :func:`sessions.hostile.redact.redact_url` gives it, and
are scrubbed of the API key, the user info and the query values.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from sessions.hostile.redact import Redactor, redact_url

if TYPE_CHECKING:
    from openai import OpenAI

    from sessions.settings import Settings

PLACEHOLDER_KEY = "not-needed"
"""Sent as the key to a local server (``base_url`` given, no key set)."""
RETRY_STATUSES = frozenset({408, 409, 429})

ChatMessage = dict[str, str]


class LLMError(RuntimeError):
    """A chat request failed for good (after any retries). The message is key-free."""

    def __init__(self, message: str, *, kind: str, attempts: int, status: int | None = None):
        super().__init__(message)
        self.kind = kind
        """timeout | connection | rate_limit | server | client | bad_response | config"""
        self.attempts = attempts
        self.status = status


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    """Retries after the first attempt (so at most ``max_retries + 1`` requests)."""
    timeout_s: float = 30.0
    """Per request: connect, and every read (so a stream that stalls this long fails)."""
    backoff_base_s: float = 0.5
    backoff_max_s: float = 8.0
    retry_after_max_s: float = 30.0
    """A server's ``Retry-After`` above this is cut to it."""

    def backoff(self, retry: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number ``retry`` (1-based)."""
        delay: float = min(self.backoff_max_s, self.backoff_base_s * 2.0 ** (retry - 1))
        delay *= rng.uniform(0.75, 1.0)  # jitter, so parallel callers don't retry in step
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.retry_after_max_s))
        return delay


@dataclass(frozen=True)
class LLMConfig:
    """Which endpoint and model, and how hard to try."""

    model: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    stream_usage: bool = True
    """Ask for a usage chunk at the end of streams (``stream_options.include_usage``)."""

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        model: str | None = None,
        base_url: str | None = None,
        **overrides: Any,
    ) -> LLMConfig:
        """Model, endpoint and key from settings (``--model``/``--base-url`` win)."""
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        return cls(
            model=model or settings.openai_model,
            base_url=base_url or settings.openai_base_url,
            api_key=key,
            **overrides,
        )

    def resolved_key(self) -> str:
        if self.api_key:
            return self.api_key
        if self.base_url:
            return PLACEHOLDER_KEY
        raise LLMError(
            "no API key: set OPENAI_API_KEY, or give --base-url for a local server",
            kind="config",
            attempts=0,
        )


@dataclass
class CallStats:
    """What one chat call cost: attempts, time and tokens."""

    attempts: int = 0
    latency_s: float = 0.0
    """From the first request to the last byte (or the failure)."""
    first_chunk_s: float | None = None
    """Streams: from the successful request to the first text chunk."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None

    @property
    def retries(self) -> int:
        return max(0, self.attempts - 1)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Completion:
    text: str
    stats: CallStats


class StreamedReply:
    """An iterable of text chunks; ``stats`` and ``text`` are complete once exhausted."""

    def __init__(self, chunks: Callable[[StreamedReply], Iterator[str]]) -> None:
        self.stats = CallStats()
        self.text = ""
        self._chunks = chunks

    def __iter__(self) -> Iterator[str]:
        for chunk in self._chunks(self):
            self.text += chunk
            yield chunk


class LLMClient:
    """A thread-safe chat client with counted, bounded retries."""

    def __init__(
        self,
        config: LLMConfig,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._client: OpenAI | None = None
        self.calls = 0
        """Chat calls started (a call's retries are not extra calls)."""
        self.retries = 0
        """Retries made across all calls."""

    # public ----------------------------------------------------------------------
    def complete(self, messages: Sequence[ChatMessage], **params: Any) -> Completion:
        """One non-streamed reply, with retries."""
        stats = CallStats()
        self._count_call()
        start = time.monotonic()
        try:
            response = self._with_retries(
                stats,
                lambda: self._openai().chat.completions.create(**self._params(messages, params)),
            )
            choice = response.choices[0] if response.choices else None
            text = (choice.message.content or "") if choice is not None else ""
            stats.finish_reason = choice.finish_reason if choice is not None else None
            if response.usage is not None:
                stats.prompt_tokens = response.usage.prompt_tokens or 0
                stats.completion_tokens = response.usage.completion_tokens or 0
        except LLMError:
            raise
        except Exception as exc:  # a body the client could not parse, etc.
            raise self._error(exc, stats) from exc
        finally:
            stats.latency_s = time.monotonic() - start
        return Completion(text=text, stats=stats)

    def stream(self, messages: Sequence[ChatMessage], **params: Any) -> StreamedReply:
        """A streamed reply; iterate it to get text chunks as they arrive."""
        request = self._params(messages, params, stream=True)

        def chunks(reply: StreamedReply) -> Iterator[str]:
            stats = reply.stats
            self._count_call()
            start = time.monotonic()
            try:
                yield from self._stream_chunks(request, stats)
            finally:
                stats.latency_s = time.monotonic() - start

        return StreamedReply(chunks)

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    # internals -------------------------------------------------------------------
    def _openai(self) -> OpenAI:
        with self._lock:
            if self._client is None:
                import openai  # heavy: only when a call is made

                base_url, query = split_query(self.config.base_url)
                self._client = openai.OpenAI(
                    api_key=self.config.resolved_key(),
                    base_url=base_url,
                    default_query=query or None,
                    max_retries=0,
                    timeout=self.config.retry.timeout_s,
                )
            return self._client

    def _count_call(self) -> None:
        with self._lock:
            self.calls += 1

    def _params(
        self, messages: Sequence[ChatMessage], extra: dict[str, Any], *, stream: bool = False
    ) -> dict[str, Any]:
        cfg = self.config
        params: dict[str, Any] = {"model": cfg.model, "messages": [dict(m) for m in messages]}
        if cfg.temperature is not None:
            params["temperature"] = cfg.temperature
        if cfg.max_tokens is not None:
            params["max_tokens"] = cfg.max_tokens
        if cfg.seed is not None:
            params["seed"] = cfg.seed
        if stream:
            params["stream"] = True
            if cfg.stream_usage:
                params["stream_options"] = {"include_usage": True}
        params.update(extra)
        return params

    def _with_retries(self, stats: CallStats, attempt: Callable[[], Any]) -> Any:
        """Run ``attempt`` until it succeeds, a non-retryable error, or retries run out."""
        while True:
            stats.attempts += 1
            try:
                return attempt()
            except Exception as exc:
                self._wait_or_raise(exc, stats)

    def _wait_or_raise(self, exc: Exception, stats: CallStats, *, mid_stream: bool = False) -> None:
        """Back off before the next attempt, or raise :class:`LLMError` if there is none."""
        retryable, retry_after = self._retryable(exc)
        if not retryable or stats.retries >= self.config.retry.max_retries:
            raise self._error(exc, stats, mid_stream=mid_stream) from exc
        with self._lock:
            self.retries += 1
        self._sleep(self.config.retry.backoff(stats.attempts, retry_after, self._rng))

    def _stream_chunks(self, request: dict[str, Any], stats: CallStats) -> Iterator[str]:
        while True:
            stats.attempts += 1
            stats.first_chunk_s = stats.finish_reason = None
            try:
                stream = self._openai().chat.completions.create(**request)
            except Exception as exc:
                self._wait_or_raise(exc, stats)
                continue
            opened = time.monotonic()
            try:
                for event in stream:
                    usage = getattr(event, "usage", None)
                    if usage is not None:
                        stats.prompt_tokens = usage.prompt_tokens or 0
                        stats.completion_tokens = usage.completion_tokens or 0
                    for choice in event.choices or ():
                        if choice.finish_reason:
                            stats.finish_reason = choice.finish_reason
                        piece = choice.delta.content if choice.delta is not None else None
                        if piece:
                            if stats.first_chunk_s is None:
                                stats.first_chunk_s = time.monotonic() - opened
                            yield piece
            except Exception as exc:  # mid-stream: timeout, cut connection, bad JSON
                if stats.first_chunk_s is not None:  # text is out: no retry
                    raise self._error(exc, stats, mid_stream=True) from exc
                self._wait_or_raise(exc, stats, mid_stream=True)
                continue
            finally:
                stream.close()
            break
        if stats.finish_reason is None:
            raise LLMError(
                self._redact(f"{self._where()}: the stream ended before the reply was complete"),
                kind="bad_response",
                attempts=stats.attempts,
            )

    def _retryable(self, exc: Exception) -> tuple[bool, float | None]:
        """Whether ``exc`` is worth a retry, and the server's Retry-After seconds if any."""
        import openai

        if isinstance(exc, openai.APIStatusError):
            if exc.status_code in RETRY_STATUSES or exc.status_code >= 500:
                return True, _retry_after_seconds(exc.response.headers)
            return False, None
        # Timeouts (APITimeoutError) and refused or dropped connections.
        return isinstance(exc, openai.APIConnectionError), None

    def _where(self) -> str:
        base = redact_url(self.config.base_url) if self.config.base_url else "api.openai.com"
        return f"{self.config.model} at {base}"

    def _error(self, exc: Exception, stats: CallStats, *, mid_stream: bool = False) -> LLMError:
        import openai

        status: int | None = None
        if isinstance(exc, LLMError):
            return exc
        if isinstance(exc, openai.APITimeoutError):
            kind, what = "timeout", f"no answer within {self.config.retry.timeout_s:g} s"
        elif isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            kind = "rate_limit" if status == 429 else "server" if status >= 500 else "client"
            what = f"HTTP {status}: {_short(_status_message(exc))}"
        elif isinstance(exc, openai.APIConnectionError):
            kind, what = "connection", f"connection failed ({_short(str(exc.__cause__ or exc))})"
        else:
            kind, what = (
                "bad_response",
                f"unreadable response ({type(exc).__name__}: {_short(str(exc))})",
            )
        if mid_stream:
            what = f"stream broke off: {what}"
        tries = f" after {stats.attempts} attempts" if stats.attempts > 1 else ""
        message = self._redact(f"{self._where()}: {what}{tries}")
        return LLMError(message, kind=kind, attempts=stats.attempts, status=status)

    def _redact(self, text: str) -> str:
        # A server's error body or the client's own message may echo the URL or a header.
        return Redactor(secrets=[self.config.api_key], urls=[self.config.base_url])(text)


def split_query(base_url: str | None) -> tuple[str | None, dict[str, str]]:
    """``base_url`` without its query, and the query as parameters for every request.

    The ``openai`` client appends the route to the base URL as a string, so a query left
    in it would end up before ``/chat/completions``."""
    if not base_url or "?" not in base_url:
        return base_url, {}
    try:
        parts = urlsplit(base_url)
    except ValueError:  # left for the client to reject, with its own (scrubbed) message
        return base_url, {}
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", parts.fragment)), query


def _status_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(body.get("message"), str):
            return str(body["message"])
    return str(getattr(exc, "message", "") or exc)


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _retry_after_seconds(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return None
