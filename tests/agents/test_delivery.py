"""Every message to an Agent goes through one delivery path, which says how it got there."""

from agent_support import runtime

from piagents.agents import delivery
from support import until


def user_texts(call):
    return [m.text for m in call.messages if m.role == "user"]


async def test_a_message_to_an_agent_loaded_here_is_delivered_to_its_loop(home, work, script):
    script.on(None, lambda call: "hi back")
    async with runtime(home, script) as rt:
        root = await rt.open_root(cwd=work)
        accepted = rt.coordinator.user_input(root, "hello")
        assert accepted.route == "delivered" and accepted.future is not None
        assert (await accepted.future).answer == "hi back"
        assert rt.store.inputs(recipient_ids=[root.id])[0].id == accepted.record.id


async def test_a_message_to_an_offline_root_wakes_it_here_when_the_runtime_wakes_roots(
    home, work, script
):
    answered = []
    script.on("sleeper", lambda call: answered.append(user_texts(call)[-1]) or "awake")
    async with runtime(home, script) as rt:
        sid = (await rt.open_root(cwd=work, name="sleeper")).id
    async with runtime(home, script) as rt:
        record = rt.store.get_session(sid)
        accepted = await rt.delivery.deliver(None, record, "wake up", "followUp")
        assert accepted.route == "woken"
        await until(lambda: answered == ["wake up"])


async def test_a_message_to_a_root_another_runtime_holds_is_stored_and_its_holder_poked(
    home, work, script
):
    answered = []
    script.on("held", lambda call: answered.append(user_texts(call)[-1]) or "ok")
    async with runtime(home, script) as holder, runtime(home, script) as other:
        held = await holder.open_root(cwd=work, name="held")
        record = other.store.get_session(held.id)
        accepted = await other.delivery.deliver(None, record, "over here", "followUp")
        assert accepted.route == "poked" and accepted.future is None
        await until(lambda: answered == ["over here"])


async def test_an_offline_root_gets_a_serve_process_when_the_runtime_does_not_wake_roots(
    home, work, script, monkeypatch
):
    served = []
    monkeypatch.setattr(
        delivery, "serve_offline_root", lambda h, sid, store=None: served.append(sid)
    )
    async with runtime(home, script) as rt:
        sid = (await rt.open_root(cwd=work, name="sleeper")).id
    async with runtime(home, script) as rt:
        rt.wake_policy.in_process = False
        accepted = await rt.delivery.deliver(None, rt.store.get_session(sid), "hi", "followUp")
        assert accepted.route == "serve" and served == [sid]
        assert delivery.waiting_for(rt.store, sid)  # left in the store for that process


async def test_a_supervision_result_is_built_here_and_handed_to_its_owner_as_it_is(
    home, work, script
):
    answered = []
    script.on("owner", lambda call: answered.append(user_texts(call)[-1]) or "thanks")
    async with runtime(home, script) as rt:
        owner = await rt.open_root(cwd=work, name="owner")
        managed = await rt.open_root(cwd=work, name="managed")
        result = rt.delivery.result_record(owner.id, managed.id, owner.id, "the result")
        assert (result.kind, result.delivery, result.delivered) == ("notification", "steer", False)
        rt.delivery.commit(result)  # supervision commits it with its generation's end
        rt.delivery.hand_over(owner.id)
        await until(lambda: answered == ["the result"])
        assert not delivery.waiting_for(rt.store, owner.id)


async def test_a_result_handed_over_from_a_worker_only_pokes_the_owners_holder(home, work, script):
    answered = []
    script.on("lead", lambda call: answered.append(user_texts(call)[-1]) or "ok")
    async with runtime(home, script) as holder, runtime(home, script) as worker:
        lead = await holder.open_root(cwd=work, name="lead")
        sender = await worker.open_root(cwd=work, name="managed")
        worker.delivery.commit(worker.delivery.result_record(lead.id, sender.id, lead.id, "done"))
        worker.delivery.hand_over(lead.id, wake=False)
        await until(lambda: answered == ["done"])


async def test_on_postgresql_a_holder_whose_listener_connection_was_ended_still_gets_it(
    tmp_path, work, script, postgres_url
):
    import psycopg

    from piagents.store.postgres_notify import NotifyMailbox, listener_name

    answered = []
    script.on("held", lambda call: answered.append(user_texts(call)[-1]) or "ok")
    url = postgres_url
    async with (
        runtime(tmp_path / "a", script, store=url) as holder,
        runtime(tmp_path / "b", script, store=url) as other,
    ):
        held = await holder.open_root(cwd=work, name="held")
        name = listener_name(holder.holder.token)
        mailbox = holder.presence.mailbox
        assert isinstance(mailbox, NotifyMailbox)
        await mailbox.listening.wait()  # its connection is made in the background
        with psycopg.connect(url, autocommit=True) as db:
            ended = db.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = %s",
                (name,),
            ).fetchall()
        assert ended == [(True,)]
        # Sent at once: the NOTIFY may come while nobody listens; it is found all the same.
        record = other.store.get_session(held.id)
        accepted = await other.delivery.deliver(None, record, "after the cut", "followUp")
        assert accepted.route == "poked"
        await until(lambda: answered == ["after the cut"])
        await until(lambda: holder.presence.mailbox.reconnections == 1)


async def test_an_offline_root_is_placed_on_the_stores_workers_when_they_can_load_its_model(
    home, work, script
):
    from piagents.store import lease
    from piagents.store.base import Registration

    worker = lease.new_holder()  # a worker alive in the registry (this process, as it were)
    try:
        async with runtime(home, script) as rt:
            by_name = await rt.open_root(cwd=work, name="placed", model="faux/agent_support:echo")
            sdk_only = await rt.open_root(cwd=work, name="here")  # the SDK's function model
            ids = (by_name.id, sdk_only.id)
        async with runtime(home, script) as rt:
            placed, here = (rt.store.get_session(i) for i in ids)
            rt.store.register(Registration(worker, kind="worker", capacity=2))
            assert (await rt.delivery.deliver(None, placed, "go", "followUp")).route == "placed"
            assert rt.store.lease_of(ids[0]) is None  # nothing loaded here: a worker takes it
            [waiting] = rt.store.waiting_roots(10)
            assert waiting.root_id == ids[0]
            # A worker could not load the SDK's in-process model: woken here, as before.
            assert (await rt.delivery.deliver(None, here, "go", "followUp")).route == "woken"
            rt.store.unregister(worker.token)
    finally:
        lease.retire(worker)
