"""The precision scenario of `rescind bench rules` (constructed): vendors' portals read over four
weeks, some of them compromised for a few days, with notes that a signed contract also confirms."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from rescind.bench.scenarios import Batch, Case, Checkpoint, micros, stamp
from rescind.engine.retraction import Retract
from rescind.engine.writes import Write

PRECISION = {"seed": 2026, "vendors": 20, "compromised": 5, "days": 28, "reads": 12,
             "invoices": 4, "answers": 3, "confirm_share": 0.53, "window_days": (3, 6)}
FIRST = ("Alder", "Birch", "Cedar", "Dunmore", "Elm", "Fairhaven", "Granite", "Holloway",
         "Ironside", "Juniper", "Kestrel", "Larch", "Marlow", "Norcross", "Oakridge", "Pinecrest",
         "Quarry", "Redfern", "Saltmarsh", "Thornbury", "Upland", "Verity", "Westgate", "Yarrow")
SECOND = ("Supplies", "Logistics", "Components", "Packaging", "Metals", "Textiles", "Foods",
          "Chemicals", "Freight", "Tooling")
STREETS = ("Harbor Lane", "Mill Road", "Station Street", "Quay Side", "Market Row", "Canal Walk")
TOWNS = ("Portsmouth, ME 03801", "Salem, MA 01970", "Bristol, RI 02809", "Mystic, CT 06355")
TERMS = ("net 30", "net 45", "net 60", "2% 10 net 30")


def _account(rng: random.Random) -> str:
    letters = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(4))
    return (f"ZZ{rng.randint(10, 99)} {letters} 0000 {rng.randint(1000, 9999)} "
            f"{rng.randint(1000, 9999)} {rng.randint(10, 99)}")


def precision_case(**overrides) -> Case:
    """Vendors' portals read over ``days``; notes from each read; plans, payments, answers.

    Per vendor: a signed contract (domain ``signed-contracts``) stating its remit address, terms
    and contact; ``reads`` reads of its portal (one observation each, the page as read that day);
    from each read four notes (bank account, remit address, terms, contact; dated, so one note per
    read). A note other than the bank account is also confirmed by the contract with probability
    ``confirm_share`` (a second justification, another trust domain); the bank account never is:
    during a compromise the page shows the attacker's account, which no contract states.
    ``invoices`` invoices per vendor: a plan on the latest bank-account and remit notes, then a
    payment on the plan, executed when due before the retractions (else pending). ``answers``
    replies per vendor (where to send paper mail) on the latest remit and terms notes.
    ``compromised`` vendors each get a window of ``window_days`` days; the retractions are applied
    one by one after the last day.
    """
    p = {**PRECISION, **overrides}
    rng = random.Random(p["seed"])
    t0 = datetime(2026, 10, 1, tzinfo=UTC)
    end = t0 + timedelta(days=p["days"])
    names = rng.sample([f"{a} {b}" for a in FIRST for b in SECOND], p["vendors"])
    compromised = set(rng.sample(range(p["vendors"]), p["compromised"]))
    sources = [{"id": "contracts", "kind": "signed_contract", "name": "Signed contracts",
                "domain": "signed-contracts"}]
    writes: list[Write] = []
    retractions: list[Retract] = []
    touched = confirmed = 0
    for v, name in enumerate(names):
        slug = name.lower().replace(" ", "-")
        portal = f"portal:{slug}"
        sources.append({"id": portal, "kind": "vendor_portal", "name": f"{name} portal",
                        "domain": portal})
        facts = {"bank account": _account(rng),
                 "remit address": f"{rng.randint(10, 990)} {rng.choice(STREETS)}, "
                                  f"{rng.choice(TOWNS)}",
                 "payment terms": rng.choice(TERMS),
                 "contact": f"ar@{slug}.example"}
        attacker = _account(rng)
        window = None
        if v in compromised:
            length = rng.randint(*p["window_days"])
            first = rng.randint(3, p["days"] - length - 2)
            window = (t0 + timedelta(days=first, hours=8), t0 + timedelta(days=first + length))
            retractions.append(Retract(f"r-{slug}", portal, micros(window[0]), micros(window[1]),
                                       reason=f"{name}'s portal was taken over"))
        contract_obs = {}
        for k in ("remit address", "payment terms", "contact"):
            mid = f"{slug}/contract/{k.replace(' ', '-')}"
            contract_obs[k] = mid
            writes.append(Write(f"e:{mid}", mid, "observation",
                                f"Signed contract with {name}: {k} {facts[k]}",
                                micros(t0 - timedelta(days=60)), source="contracts"))
        days = set(rng.sample(range(1, p["days"]), p["reads"] - 1)) | {0}
        if window is not None:  # a compromised portal is read at least twice while it is
            span = range(first, first + length)
            days |= set(rng.sample(span, 2))
        days = sorted(days)
        latest: dict[str, str] = {}
        timeline: list[tuple[datetime, str, dict]] = []
        for d in days:
            at = t0 + timedelta(days=d, hours=rng.randint(8, 16), minutes=rng.randint(0, 59))
            timeline.append((at, "read", {}))
        for i in range(p["invoices"]):
            at = t0 + timedelta(days=rng.randint(1, p["days"] - 1), hours=rng.randint(9, 17))
            lag = rng.choice((0, 0, 7, 14))
            timeline.append((at, "invoice", {"n": i, "due": at + timedelta(days=lag)}))
        for i in range(p["answers"]):
            at = t0 + timedelta(days=rng.randint(1, p["days"] - 1), hours=rng.randint(9, 17))
            timeline.append((at, "answer", {"n": i}))
        for at, what, info in sorted(timeline, key=lambda x: x[0]):
            day = at.strftime("%Y-%m-%d")
            if what == "read":
                inside = window is not None and window[0] <= at <= window[1]
                shown = {**facts, "bank account": attacker if inside else facts["bank account"]}
                obs = f"{slug}/read/{day}"
                page = (f"{name} supplier portal, {day}: bank account {shown['bank account']}; "
                        f"remit to {shown['remit address']}; terms {shown['payment terms']}; "
                        f"contact {shown['contact']}")
                writes.append(Write(f"e:{obs}", obs, "observation", page, micros(at),
                                    source=portal))
                for k, value in shown.items():
                    mid = f"{slug}/note/{k.replace(' ', '-')}/{day}"
                    note_at = micros(at + timedelta(minutes=5))
                    text = f"{name} {k} as of {day}: {value}"
                    writes.append(Write(f"e:{mid}", mid, "belief", text, note_at,
                                        premises=(obs,), agent="ap"))
                    backed = k != "bank account" and rng.random() < p["confirm_share"]
                    if backed:
                        writes.append(Write(f"e2:{mid}", mid, "belief", text, note_at,
                                            premises=(contract_obs[k],), agent="ap"))
                    if inside:
                        touched += 1
                        confirmed += backed
                    latest[k] = mid
            elif what == "invoice":
                inv = f"INV-{v + 1:02d}{info['n'] + 1:02d}"
                amount = float(rng.choice((800, 2400, 6000, 12000, 34500)))
                plan = f"{slug}/plan/{inv}"
                writes.append(Write(f"e:{plan}", plan, "plan",
                                    f"Plan: pay {inv} to {name}, ${amount:,.2f} to the account "
                                    f"in the latest note, remit advice to the latest address",
                                    micros(at), premises=(latest["bank account"],
                                                          latest["remit address"]),
                                    agent="payments"))
                pay = f"{slug}/payment/{inv}"
                writes.append(Write(f"e:{pay}", pay, "action", f"pay {inv}",
                                    micros(at + timedelta(minutes=1)), name=f"payment:{inv}",
                                    premises=(plan,), agent="payments",
                                    extra={"amount": amount, "payee": slug,
                                           "executed": info["due"] <= end}))
            else:
                ans = f"{slug}/answer/{info['n']}"
                writes.append(Write(f"e:{ans}", ans, "answer",
                                    f"Paper mail for {name} goes to the remit address on file, "
                                    f"on its payment terms (asked on {day})", micros(at),
                                    premises=(latest["remit address"], latest["payment terms"]),
                                    agent="ap"))
    writes.sort(key=lambda w: w.at)
    after = micros(end + timedelta(hours=9))
    events: list[Batch | Checkpoint] = [Batch(writes)]
    for i, op in enumerate(sorted(retractions, key=lambda r: r.start)):
        events.append(Checkpoint(f"{op.source} compromised {stamp(op.start)} - {stamp(op.end)}",
                                 after + i * 3_600_000_000, [op]))
    return Case(name="precision", sources=sources, events=events,
                params={**p, "window_days": list(p["window_days"])},
                notes={"notes taken from a compromised read": touched,
                       "of which also confirmed by the contract": confirmed,
                       "confirmed share": round(confirmed / touched, 3) if touched else None})
