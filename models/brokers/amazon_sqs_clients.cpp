// Amazon SQS standard queues: the clients' side. Consumers polling, crashing and settling
// (DeleteMessage, ChangeMessageVisibility), a stale receipt handle, and outages. The rules are
// in amazon_sqs.hpp.
#include <algorithm>

#include "models/brokers/amazon_sqs.hpp"
#include "models/world.hpp"

namespace brokersim {

std::uint32_t AmazonSqs::capacity(const Consumer& c) const {
  return static_cast<std::uint32_t>(c.spec().prefetch == 0 ? c.spec().slots : c.spec().prefetch) + raised_[c.index()];
}

// kombu's virtual QoS takes the new prefetch count at once: the next ReceiveMessage asks for the
// room it leaves (consumers[].eta hold-outside-prefetch). A client without a buffer (prefetch 0)
// has no count to raise.
void AmazonSqs::prefetch_changed(Consumer& c, int delta) {
  const int ci = c.index();
  if (c.spec().prefetch == 0 || !clients_[ci].listening()) return;
  raised_[ci] = static_cast<std::uint32_t>(static_cast<std::int64_t>(raised_[ci]) + delta);
  if (delta > 0) {
    give_room(c);
    dispatch(c.queue());
  } else if (!has_room(c)) {
    clients_[ci].leave(dispatchers_[c.queue()], ci);
  }
}

bool AmazonSqs::has_room(const Consumer& c) const {
  const ClientRecord& cl = clients_[c.index()];
  // A batch handler's slots receive nothing while they all run: Lambda polls for a concurrency
  // slot only when it is free, and meanwhile the messages wait visible in the queue (not in a
  // busy invocation's buffer).
  if (c.spec().batch.max_messages > 0 && c.busy >= c.spec().slots) return false;
  return cl.listening() && cl.held.size() < capacity(c);
}

void AmazonSqs::give_room(Consumer& c) {
  clients_[c.index()].rejoin(dispatchers_[c.queue()], c.index(), c.spec().priority, [&] { return has_room(c); });
}

// A managed endpoint: a client can always connect; during an outage its receives return nothing.
bool AmazonSqs::open_connection(Consumer& /*c*/) { return true; }

// A client that is stopping (its group leaves) polls no more; what it received stays in flight
// until it deletes it or its visibility lapses.
void AmazonSqs::cancel(Consumer& c) { clients_[c.index()].cancel(dispatchers_[c.queue()], c.index()); }

void AmazonSqs::consume(Consumer& c) {
  clients_[c.index()].subscribe();
  give_room(c);
  dispatch(c.queue());
}

// The client process is gone. The broker notices nothing: what it had received stays in flight
// until its visibility lapses. Its stale copies (ghosts) go with it; a delete or visibility change
// it had already sent still arrives.
void AmazonSqs::close_connection(Consumer& c) {
  ClientRecord& cl = clients_[c.index()];
  cl.close(dispatchers_[c.queue()], c.index());
  raised_[c.index()] = 0;  // the process that raised its prefetch is gone
  const auto held = std::exchange(cl.held, {});
  for (std::uint32_t j : held) {
    Job& job = w_.jobs[j];
    job.unacked_pos = kNoIndex;
    if (job.early == Job::Early::OnTheWire) {
      // Its early delete is on the wire: it arrives all the same, and decides (settle_early).
    } else if (job.ghost) {
      w_.drop_ghost(j);
    } else if (job.where != Where::Settling) {
      ++job.gen;  // the client's pending receive and completion are void
      job.where = Where::Ready;  // in flight at the broker, with no client
      w_.ledger.update_resting(job);
    }
  }
}

// The client deletes nothing for a failed job (unless on_failure "delete"), nor for a timed-out
// one under on_timeout "keep".
// A job whose early delete failed is not deleted again: Celery acks once, before the task.
bool AmazonSqs::kept_back(const Job& job) const {
  if (job.early == Job::Early::Failed) return true;
  const ConsumerSpec& spec = w_.consumers[job.consumer].spec();
  return (job.decision == Outcome::Failed && !spec.sqs.delete_failed) || (job.decision == Outcome::TimedOut && spec.sqs.keep_timed_out);
}

// A settlement arrives. ack = DeleteMessage, unless the execution failed (then the client deletes
// nothing and the message comes back when its visibility lapses); requeue =
// ChangeMessageVisibility(0): visible at once. During an outage both calls fail.
void AmazonSqs::settle(std::uint32_t j, std::uint32_t gen) {
  Job& job = w_.jobs[j];
  if (job.gen != gen) return;
  if (job.ack == Job::Ack::Reject || job.ack == Job::Ack::Defer)
    throw InvariantError("amazon-sqs: a consumer rejected or deferred a message (the loader refuses on_expired reject and defer)");
  const int ci = job.consumer;
  const bool held = job.unacked_pos != kNoIndex;
  if (held) clients_[ci].unhold(w_.jobs, j);
  if (job.early == Job::Early::OnTheWire) {
    settle_early(j);
  } else if (job.ghost) {
    settle_ghost(j);
  } else {
    const bool deletes = job.ack == Job::Ack::Ack && !kept_back(job);
    if (down_ || !(deletes || job.ack == Job::Ack::Requeue)) {
      job.where = Where::Ready;  // still in flight, with no client, until its visibility lapses
      w_.ledger.update_resting(job);
    } else if (deletes) {
      gone(j);
      w_.leave(j);
    } else {
      w_.ledger.unacked_changed(job.queue, w_.now, job, -1);
      make_visible(j);
      dispatch(job.queue);
    }
  }
  if (held) {
    Consumer& c = w_.consumers[ci];
    give_room(c);
    dispatch(c.queue());
  }
}

// An early delete (consumers[].ack before-start) arrives while the client runs the job, or
// after. It deletes the message if its receipt handle is the latest: the client's copy is still
// in flight, or, when the visibility lapsed first, nobody received the message since (then the
// client's stale copy is the job again: the broker's copy, visible and untouched, is dropped).
// The job then stays with its client, which decides it (World::kept_by_client), or is `lost`
// with a client that crashed meanwhile. A delete that fails (an outage, a later receipt) is not
// sent again: the client runs the job to its end and sends nothing more, and the message comes
// back when its visibility lapses (a stale copy's run has no outcome of its own).
void AmazonSqs::settle_early(std::uint32_t j) {
  Job& job = w_.jobs[j];
  std::uint32_t live = holds(j, job.id, job.queue) ? j : kNoIndex;
  if (job.ghost) {
    live = messages_[j].live;
    if (live != kNoIndex && !(holds(live, job.id, w_.jobs[live].queue) && messages_[live].token == messages_[j].live_token))
      live = kNoIndex;
  }
  const Consumer& client = w_.consumers[static_cast<std::size_t>(job.ran_at)];
  const bool client_gone = client.connection() != job.ran_connection;
  if (down_ || live == kNoIndex) {
    job.early = Job::Early::Failed;
    if (job.where == Where::Executing && !client_gone) return;  // it ends, then settles as kept back
    job.early = Job::Early::None;
    if (job.ghost) {
      w_.drop_ghost(j);
    } else {
      ++job.gen;  // a stale execution end (its client crashed) is void
      job.where = Where::Ready;  // in flight, with no client, until its visibility lapses
      w_.ledger.update_resting(job);
    }
    return;
  }
  gone(live);
  if (live != j) {
    // The broker's copy: nobody received it, the message is gone. What it carried for the job's
    // outcome (an expiry's queue wait) is now the client's copy's.
    job.queue_expiry_wait = w_.jobs[live].queue_expiry_wait;
    w_.drop_ghost(live);
    job.ghost = false;
    messages_[j].live = kNoIndex;
  }
  if (!w_.kept_by_client(j)) w_.leave(j);
}

// The settlement of a stale copy. Its receipt handle is the most recent one only if nobody
// received the message since it became visible again: then a delete removes the message, and the
// stale copy's execution is the job's outcome. Otherwise the delete succeeds but deletes nothing
// (DeleteMessage API reference), and a visibility change does nothing.
void AmazonSqs::settle_ghost(std::uint32_t j) {
  const Job& ghost = w_.jobs[j];
  const std::uint32_t live = messages_[j].live;
  const bool deletes = ghost.ack == Job::Ack::Ack && !kept_back(ghost) && !down_;
  if (deletes && live != kNoIndex && holds(live, ghost.id, w_.jobs[live].queue) &&
      messages_[live].token == messages_[j].live_token) {
    Job& job = w_.jobs[live];
    job.decision = ghost.decision;
    job.ended = ghost.ended;
    job.consumer = ghost.consumer;
    job.received = ghost.received;
    job.keep_first_start();
    job.started = ghost.started;
    job.finished = ghost.finished;
    job.stale_on_receipt = ghost.stale_on_receipt;
    gone(live);
    w_.drop_ghost(j);
    w_.leave(live);
    return;
  }
  w_.drop_ghost(j);
}

// Only a heartbeat needs to hear starts: without one, the visibility runs whatever the client does.
void AmazonSqs::start() {
  for (const auto& c : w_.s.consumers) w_.broker_hears_starts = w_.broker_hears_starts || c.sqs.heartbeat_every > 0;
}

// The handler starts: its heartbeat, if the consumer has one, begins (amazon_sqs.hpp).
void AmazonSqs::execution_started(std::uint32_t j) {
  const Job& job = w_.jobs[j];
  const ConsumerSpec& spec = w_.consumers[job.consumer].spec();
  if (job.ghost || spec.sqs.heartbeat_every <= 0 || j >= messages_.size() || messages_[j].state != State::InFlight) return;
  w_.at(sim::add_sat(w_.now, spec.sqs.heartbeat_every), Ev::Heartbeat, j, job.gen, messages_[j].token);
}

// One heartbeat: ChangeMessageVisibility(extend) while the handler still runs this receive. The
// visibility then ends extend after now, unless that passes 12 h from the receive: the call is
// rejected and the client gives up. During an outage the call fails; the next one is tried.
void AmazonSqs::heartbeat(std::uint32_t j, std::uint32_t gen, std::uint32_t token) {
  const Job& job = w_.jobs[j];
  if (job.gen != gen || job.ghost || job.where != Where::Executing || j >= messages_.size()) return;
  Message& m = messages_[j];
  if (m.token != token || m.state != State::InFlight) return;
  const ConsumerSpec& spec = w_.consumers[job.consumer].spec();
  if (!down_) {
    const Time until = sim::add_sat(w_.now, spec.sqs.heartbeat_extend);
    if (until - m.received_at > kMaxVisibility) return;
    m.visible_until = until;
    push_lapse(job.queue, j);
  }
  w_.at(sim::add_sat(w_.now, spec.sqs.heartbeat_every), Ev::Heartbeat, j, gen, token);
}


// A regional outage: sends are refused and receives return nothing until it ends; the timers
// (visibility, delay, retention) keep running.
void AmazonSqs::down(Time duration) {
  up_at_ = std::max(up_at_, w_.now + duration);
  w_.at(up_at_, Ev::BrokerUp, 0);
  down_ = true;
}

}  // namespace brokersim
