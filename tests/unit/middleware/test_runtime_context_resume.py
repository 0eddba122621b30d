"""An invocation resuming an interrupt continues the interrupted run: its context is kept by
thread until a ``Command(resume=...)`` of that thread takes it over, and the resume value is
the resuming user's word (less choices and what the interrupt asked with, sent back)."""

from __future__ import annotations

from langgraph.errors import GraphInterrupt
from langgraph.types import Command, Interrupt

from rescind.middleware.context import STORE, Contexts, RunContext
from rescind.middleware.resume import Resumes, asked, interrupted, resume_value, statements

REJECT = {"decisions": [{"type": "approve"},
                        {"type": "reject", "message": "Not Friday: book it for Monday 14 Dec"}]}


def _interrupt(value: object) -> GraphInterrupt:
    return GraphInterrupt((Interrupt(value=value, id="i-1"),))


def test_a_nested_rejection_message_is_a_statement_and_choices_are_not() -> None:
    """Of HumanInTheLoopMiddleware's decisions, the rejection's message is said; the decision
    types (bare lowercase choices) are not."""
    assert statements(REJECT) == "Not Friday: book it for Monday 14 Dec"
    assert statements({"decisions": [{"type": "approve"}]}) == ""


def test_a_plain_answer_is_said_whole_and_numbers_count() -> None:
    """A plain text answer is one statement; numbers inside a structured one are said too;
    booleans and None are not."""
    assert statements("  yes, Friday  ") == "yes, Friday"
    assert statements({"ok": True, "amount": 1250, "rate": 0.5, "note": None}) == "1250\n0.5"


def test_what_the_interrupt_asked_with_and_comes_back_unchanged_is_not_said() -> None:
    """An edit sends back every argument: those the interrupt showed (the model's proposal)
    are not the editor's word, the changed ones are."""
    request = _interrupt({"action_requests": [{"name": "book", "args": {
        "parcel": "JD0146", "slot": "Wed 9 Dec"}}]})
    shown = asked(request)
    assert {"JD0146", "Wed 9 Dec", "book"} <= shown
    edit = {"decisions": [{"type": "edit", "edited_action": {"name": "book", "args": {
        "parcel": "JD0146", "slot": "Thu 10 Dec", "note": "ring twice"}}}]}
    assert statements(edit, shown) == "Thu 10 Dec\nring twice"
    assert statements("JD0146", shown) == ""


def test_only_a_command_with_a_resume_value_resumes() -> None:
    """``Command(resume=...)`` resumes; a new input, None, or a Command with only an update or
    a goto does not; an interrupt is told apart from any other error."""
    assert resume_value(Command(resume="ok")) == (True, "ok")
    assert resume_value(Command(update={"x": 1}))[0] is False
    assert resume_value({"messages": []})[0] is False
    assert resume_value(None)[0] is False
    assert interrupted(_interrupt("?")) and not interrupted(ValueError("x"))
    assert not interrupted(None)


def test_an_interrupted_run_s_context_is_taken_over_by_the_resuming_run() -> None:
    """Run 1 stops at an interrupt: its context is kept by thread; run 2 resumes the thread
    and gets that context (once) with the resume value's statement to deliver once."""
    resumes, ctx = Resumes(), RunContext()
    assert resumes.begin("r1", {"messages": []}, "t") is None
    resumes.stopped("r1", _interrupt({"question": "which day?"}))
    resumes.end("r1", ctx)
    assert len(resumes) == 1
    assert resumes.begin("r2", Command(resume=REJECT), "t") is ctx
    assert resumes.said("r2") == [("resume:r2", "Not Friday: book it for Monday 14 Dec")]
    assert resumes.said("r2") == []  # delivered once
    resumes.end("r2", ctx)
    assert len(resumes) == 0
    assert resumes.begin("r3", Command(resume="again"), "t") is None  # taken already


def test_a_run_that_ends_without_an_interrupt_keeps_nothing() -> None:
    """A run that is not stopped by an interrupt leaves nothing for its thread; a run with no
    thread id is never kept (no checkpointer: nothing can resume it)."""
    resumes = Resumes()
    resumes.begin("r1", {"messages": []}, "t")
    resumes.end("r1", RunContext())
    resumes.begin("r2", {"messages": []}, None)
    resumes.stopped("r2", _interrupt("?"))
    resumes.end("r2", RunContext())
    assert len(resumes) == 0


def test_a_new_input_on_the_thread_forgets_the_interrupted_run() -> None:
    """The thread's next invocation starts afresh (a new question, not a resume): the kept
    context is dropped, and a later resume finds nothing."""
    resumes = Resumes()
    resumes.begin("r1", {"messages": []}, "t")
    resumes.stopped("r1", _interrupt("?"))
    resumes.end("r1", RunContext())
    assert resumes.begin("r2", {"messages": [("user", "something else")]}, "t") is None
    assert len(resumes) == 0


def test_interrupted_threads_kept_are_bounded_the_oldest_dropped() -> None:
    """At most ``kept`` threads are kept; the oldest interrupted one goes first."""
    resumes = Resumes(kept=2)
    for i in range(3):
        resumes.begin(f"r{i}", None, f"t{i}")
        resumes.stopped(f"r{i}", _interrupt("?"))
        resumes.end(f"r{i}", RunContext())
    assert len(resumes) == 2
    assert resumes.begin("x", Command(resume="y"), "t0") is None
    assert resumes.begin("y", Command(resume="y"), "t2") is not None


def test_a_continued_context_keeps_what_was_delivered_and_takes_the_new_inputs() -> None:
    """The resuming run's context is the interrupted one's (deliveries, turns) with the
    resuming invocation's input texts only (the earlier user's are no longer its input)."""
    contexts = Contexts()
    contexts.begin("r1", {"Book my parcel please"})
    old = contexts.get("r1")
    old.deliver("obs-1", "Parcel JD0146 held at the depot", STORE)
    old.model_turn("agent")
    contexts.begin("r2", {"Not Friday"}, continues=old)
    ctx = contexts.get("r2")
    assert ctx is old and ctx.turn == 1 and "obs-1" in ctx.turn_of
    assert ctx.inputs == {"Not Friday"}
