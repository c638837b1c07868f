"""The task panel's lines, against the spec's format (§7)."""

from piagents.tui.task_rows import AgentTask, ProgramTask, TaskSnapshot, task_rows

ROOT = "root-id"


def agent(id, name, state, owner=ROOT, queued=0):
    return AgentTask(id, owner, name, id, state, queued)


def test_no_live_work_means_no_rows():
    idle = TaskSnapshot(ROOT, (agent("1a2b3c4d", "w", "idle"),))

    assert task_rows(TaskSnapshot(ROOT)) == []
    assert task_rows(idle) == []


def test_a_running_agent_is_one_row_under_the_header():
    snapshot = TaskSnapshot(ROOT, (agent("1a2b3c4d", "w", "running"),))

    assert task_rows(snapshot) == [
        "Tasks (1 live, /tasks to view)",
        "  Agent w (1a2b3c4d)  running",
    ]


def test_owned_agents_nest_under_their_owners_two_spaces_a_level_with_queued_counts():
    snapshot = TaskSnapshot(
        ROOT,
        (
            agent("1a2b3c4d", "w", "waiting"),
            agent("9f9f9f9f", "v", "running"),
            agent("5e6f7a8b", "sub", "queued", owner="1a2b3c4d", queued=2),
        ),
    )

    assert task_rows(snapshot) == [
        "Tasks (3 live, /tasks to view)",
        "  Agent w (1a2b3c4d)  waiting",
        "    Agent sub (5e6f7a8b)  queued  2 queued",
        "  Agent v (9f9f9f9f)  running",
    ]


def test_idle_owners_stay_to_keep_the_tree_but_are_not_counted_live():
    snapshot = TaskSnapshot(
        ROOT,
        (
            agent("1a2b3c4d", "w", "idle"),
            agent("2b2b2b2b", "quiet", "idle"),
            agent("5e6f7a8b", "sub", "running", owner="1a2b3c4d"),
        ),
    )

    assert task_rows(snapshot) == [
        "Tasks (1 live, /tasks to view)",
        "  Agent w (1a2b3c4d)  idle",
        "    Agent sub (5e6f7a8b)  running",
    ]


def test_siblings_keep_their_start_order_at_every_depth():
    snapshot = TaskSnapshot(
        ROOT,
        (
            agent("b0000000", "b", "running"),
            agent("a0000000", "a", "running"),
            agent("d0000000", "d", "running", owner="b0000000"),
            agent("c0000000", "c", "running", owner="b0000000"),
        ),
    )

    assert [row.strip() for row in task_rows(snapshot)[1:]] == [
        "Agent b (b0000000)  running",
        "Agent d (d0000000)  running",
        "Agent c (c0000000)  running",
        "Agent a (a0000000)  running",
    ]


def test_background_programs_follow_the_agents():
    snapshot = TaskSnapshot(ROOT, (agent("1a2b3c4d", "w", "running"),), (ProgramTask("p1a2b3c4"),))

    assert task_rows(snapshot) == [
        "Tasks (2 live, /tasks to view)",
        "  Agent w (1a2b3c4d)  running",
        "  Program p1a2b3c4  running",
    ]


def test_rows_that_do_not_fit_become_a_count_of_the_rest():
    agents = tuple(agent(f"{i:08d}", f"w{i}", "running") for i in range(6))

    assert task_rows(TaskSnapshot(ROOT, agents), max_rows=4) == [
        "Tasks (6 live, /tasks to view)",
        "  Agent w0 (00000000)  running",
        "  Agent w1 (00000001)  running",
        "  Agent w2 (00000002)  running",
        "  +3 more",
    ]


def test_rows_that_fit_exactly_are_all_shown():
    agents = tuple(agent(f"{i:08d}", f"w{i}", "running") for i in range(3))

    assert len(task_rows(TaskSnapshot(ROOT, agents), max_rows=3)) == 4


PROGRAM = "0190abcd-0000-7000-8000-000000000000"


def test_a_programs_live_agents_nest_under_its_row_under_its_caller():
    def member(id, name, state, owner):
        return AgentTask(id, owner, name, id, state, program_id=PROGRAM)

    snapshot = TaskSnapshot(
        ROOT,
        (
            agent("1a2b3c4d", "w", "idle"),
            member("2c2c2c2c", "tests", "running", "1a2b3c4d"),
            member("3d3d3d3d", "lint", "idle", "1a2b3c4d"),
            member("4e4e4e4e", "sub", "running", "2c2c2c2c"),
            agent("5f5f5f5f", "v", "running"),
        ),
        (ProgramTask(PROGRAM, caller_id="1a2b3c4d"),),
    )

    assert task_rows(snapshot) == [
        "Tasks (4 live, /tasks to view)",
        "  Agent w (1a2b3c4d)  idle",
        "    Program 0190abcd  running",
        "      Agent tests (2c2c2c2c)  running",
        "        Agent sub (4e4e4e4e)  running",
        "  Agent v (5f5f5f5f)  running",
    ]


def test_a_program_with_live_agents_has_its_row_even_when_not_given():
    snapshot = TaskSnapshot(
        ROOT, (AgentTask("2c2c2c2c", ROOT, "tests", "2c2c2c2c", "running", program_id=PROGRAM),)
    )

    assert task_rows(snapshot) == [
        "Tasks (2 live, /tasks to view)",
        "  Program 0190abcd  running",
        "    Agent tests (2c2c2c2c)  running",
    ]


def test_a_foreground_program_has_a_row_only_while_it_has_live_agents_shown_by_its_short_id():
    foreground = ProgramTask(PROGRAM, caller_id="1a2b3c4d", short_id="0190abcd0", background=False)
    member = AgentTask("2c2c2c2c", "1a2b3c4d", "tests", "2c2c2c2c", "running", program_id=PROGRAM)
    waiting = agent("1a2b3c4d", "w", "waiting")

    assert task_rows(TaskSnapshot(ROOT, (agent("1a2b3c4d", "w", "idle"),), (foreground,))) == []
    assert task_rows(TaskSnapshot(ROOT, (waiting, member), (foreground,))) == [
        "Tasks (3 live, /tasks to view)",
        "  Agent w (1a2b3c4d)  waiting",
        "    Program 0190abcd0  running",
        "      Agent tests (2c2c2c2c)  running",
    ]


def test_a_background_program_with_no_live_agent_shows_under_its_idle_caller():
    snapshot = TaskSnapshot(
        ROOT,
        (agent("1a2b3c4d", "w", "idle"),),
        (ProgramTask(PROGRAM, caller_id="1a2b3c4d", short_id="0190abcd"),),
    )

    assert task_rows(snapshot) == [
        "Tasks (1 live, /tasks to view)",
        "  Agent w (1a2b3c4d)  idle",
        "    Program 0190abcd  running",
    ]


def test_a_callers_programs_follow_its_agents_in_the_order_they_started():
    later = "0190beef-0000-7000-8000-000000000000"
    member = AgentTask("2c2c2c2c", ROOT, "tests", "2c2c2c2c", "running", program_id=later)
    snapshot = TaskSnapshot(
        ROOT,
        (member, agent("1a2b3c4d", "w", "running")),
        (ProgramTask(later, caller_id=ROOT), ProgramTask(PROGRAM, caller_id=ROOT)),
    )

    assert task_rows(snapshot) == [
        "Tasks (4 live, /tasks to view)",
        "  Agent w (1a2b3c4d)  running",
        "  Program 0190abcd  running",
        "  Program 0190beef  running",
        "    Agent tests (2c2c2c2c)  running",
    ]
