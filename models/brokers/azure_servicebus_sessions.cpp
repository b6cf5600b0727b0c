// Azure Service Bus sessions (message-sessions.md): accepting a session gives one client an
// exclusive lock on all its current and future messages, delivered in order. brokersim's client
// is a session processor with MaxConcurrentSessions = slots and MaxConcurrentCallsPerSession = 1:
// a session has at most one message out, and the next one waits for its settlement (or its lock
// lapse). A client holds a session until the session has nothing left and then for its
// SessionIdleTimeout (session_idle_timeout_ms; 0 by default here: it closes the session at once),
// waiting for the session's next message: the session keeps one of its MaxConcurrentSessions.
// A message of that session arriving meanwhile goes to it; at the timeout it closes the session.
// (ServiceBusSessionProcessorOptions.SessionIdleTimeout: "the maximum amount of time to wait for a
// message to be received for the currently active session. After this time has elapsed, the
// processor will close the session and attempt to process another session.")
#include <algorithm>
#include <set>
#include <utility>

#include "models/brokers/azure_servicebus.hpp"
#include "models/world.hpp"

namespace brokersim {

// The session lock (message-sessions.md: accepting a session locks it; its lock duration is the
// entity's LockDuration): modelled when the holder's processor limits the lock renewal
// (max_auto_lock_renewal_ms, ServiceBusSessionProcessorOptions.MaxAutoLockRenewalDuration, "the
// maximum duration within which the session lock will be renewed automatically"). The renewal
// starts at the acceptance and is continuous here, so the lock lapses one lock duration after it
// stops: acceptance + M + lock duration. Without the limit the renewal never gives up, the session
// lock never lapses, and each message keeps its own peek-lock as before the key (so runs without
// it are unchanged; a real session lock renewed without end would not let a buffered message's
// lock lapse either: docs/scenario.md).
bool AzureServiceBus::session_lock_holds(int q, int ci) const {
  if (!sessions_on(q) || ci < 0) return false;
  const ConsumerSpec& spec = w_.consumers[static_cast<std::size_t>(ci)].spec();
  return !spec.servicebus.receive_and_delete && spec.servicebus.max_auto_lock_renewal.has_value();
}

// The session lock lapsed: its client loses the session. The message it has out (in transit,
// buffered, executing or settling) is the broker's again, as at a message lock's lapse: a session
// lock timeout counts as a delivery (message-sessions.md, "Impact of delivery count"), the client's
// copy runs on and its settlement fails (a duplicate execution, cause `lapse`). The session is free
// for any client to accept, with a fresh lock.
void AzureServiceBus::session_lock_end(int q, std::uint32_t token) {
  Entity& E = entities_[q];
  const auto wait = E.lock_waits.find(token);
  if (wait == E.lock_waits.end()) return;
  const std::int64_t id = wait->second;
  E.lock_waits.erase(wait);
  const auto it = E.sessions.find(id);
  if (it == E.sessions.end() || it->second.lock != token) return;
  Entity::Session& session = it->second;
  const int holder = session.holder;
  session.lock = 0;
  if (holder < 0) return;
  --receivers_[static_cast<std::size_t>(holder)].sessions;
  session.holder = -1;
  if (session.idle != 0) {
    E.idle_waits.erase(session.idle);
    session.idle = 0;
  }
  std::uint32_t out = kNoIndex;
  if (session.out) {
    for (std::uint32_t j : receivers_[static_cast<std::size_t>(holder)].held) {
      if (!w_.jobs[j].ghost && w_.jobs[j].queue == q && lock_of(j).session == id) out = j;
    }
  }
  if (out != kNoIndex) {
    lapse(out);  // back into its session (or dead-lettered, or expired), and dispatches
    return;
  }
  // Nothing of it with the client (or its settlement was lost in an outage: that message's own
  // lock end returns it): without waiting messages the session is simply closed.
  if (!session.out && session.ready.empty()) E.sessions.erase(it);
  dispatch(q);
}

void AzureServiceBus::push_session(std::uint32_t j, int q) {
  const Job& job = w_.jobs[j];
  entities_[q].sessions[lock_of(j).session].ready.emplace(job.seq, j);
}

// The message (live copy j) is no longer out with its client: its session may send the next one.
void AzureServiceBus::session_back(std::uint32_t j) {
  const int q = w_.jobs[j].queue;
  if (!sessions_on(q)) return;
  Entity& E = entities_[q];
  const auto it = E.sessions.find(lock_of(j).session);
  if (it == E.sessions.end()) return;
  it->second.out = false;
  if (it->second.ready.empty()) {
    const int holder = it->second.holder;
    const Time idle = holder >= 0 ? w_.consumers[static_cast<std::size_t>(holder)].spec().servicebus.session_idle_timeout : 0;
    if (idle > 0) {
      // The client keeps the session, waiting for its next message, until its idle timeout.
      it->second.idle = ++E.next_idle;
      E.idle_waits[it->second.idle] = it->first;
      w_.at(sim::add_sat(w_.now, idle), Ev::SessionIdle, static_cast<std::uint32_t>(q), it->second.idle);
      return;
    }
    // Nothing left: the client closes the session.
    if (holder >= 0) --receivers_[static_cast<std::size_t>(holder)].sessions;
    E.sessions.erase(it);
  }
}

// A held session's idle timeout: if nothing was received for it meanwhile, its client closes it
// and may accept another session.
void AzureServiceBus::session_idle_end(int q, std::uint32_t token) {
  Entity& E = entities_[q];
  const auto wait = E.idle_waits.find(token);
  if (wait == E.idle_waits.end()) return;
  const std::int64_t id = wait->second;
  E.idle_waits.erase(wait);
  const auto it = E.sessions.find(id);
  if (it == E.sessions.end() || it->second.idle != token) return;
  if (it->second.holder >= 0) --receivers_[static_cast<std::size_t>(it->second.holder)].sessions;
  E.sessions.erase(it);
  dispatch(q);
}

// A crashed client's sessions are free for another client (their messages out with it stay locked
// until their locks lapse, and keep the session's one message out).
void AzureServiceBus::release_sessions(int ci, int q) {
  if (!sessions_on(q)) return;
  for (auto& [id, session] : entities_[q].sessions) {
    if (session.holder != ci) continue;
    session.holder = -1;
    session.lock = 0;  // its lapse is void: the session is free already
  }
  receivers_[static_cast<std::size_t>(ci)].sessions = 0;
}

// The next message for client ci: the oldest waiting message of a session it holds, else of the
// free session with the oldest waiting message (accepting it), if it may hold one more. Expired
// messages met on the way are removed (lazy expiry). kNoIndex: nothing for this client now.
std::uint32_t AzureServiceBus::next_for(int q, int ci) {
  Entity& E = entities_[q];
  Receiver& r = receivers_[static_cast<std::size_t>(ci)];
  const int max_sessions = w_.consumers[static_cast<std::size_t>(ci)].slots();
  for (;;) {
    Entity::Session* best = nullptr;
    std::int64_t best_id = 0;
    bool best_held = false;
    for (auto& [id, session] : E.sessions) {
      if (session.out || session.ready.empty()) continue;
      const bool held = session.holder == ci;
      if (!held && (session.holder >= 0 || r.sessions >= max_sessions)) continue;
      // A session already held comes first; then the oldest head.
      if (best == nullptr || (held && !best_held) ||
          (held == best_held && session.ready.begin()->first < best->ready.begin()->first)) {
        best = &session;
        best_id = id;
        best_held = held;
      }
    }
    if (best == nullptr) return kNoIndex;
    if (!best_held) {
      best->holder = ci;
      ++r.sessions;
      if (session_lock_holds(q, ci)) {
        // Accepted: the session lock, renewed for max_auto_lock_renewal_ms from now.
        const ConsumerSpec& spec = w_.consumers[static_cast<std::size_t>(ci)].spec();
        best->lock = ++E.next_lock;
        best->locked_until = sim::add_sat(sim::add_sat(w_.now, *spec.servicebus.max_auto_lock_renewal), E.spec->servicebus.lock_duration);
        E.lock_waits[best->lock] = best_id;
        w_.at(best->locked_until, Ev::Lease, static_cast<std::uint32_t>(q), best->lock, kSessionLockTimer);
      }
    }
    const std::uint32_t j = best->ready.begin()->second;
    best->ready.erase(best->ready.begin());
    if (best->idle != 0) {
      E.idle_waits.erase(best->idle);  // its next message came in time
      best->idle = 0;
    }
    const Job& job = w_.jobs[j];
    E.level.remove(job);
    if (job.queue_expiry > w_.now) {
      best->out = true;
      return j;
    }
    // Seed 004 (message-expiration.md, "expiration for session-enabled entities"): one expired
    // message expires every message of its session; locked ones stay protected. docs/semantics.md D6
    // found it in no English version of the page: unverified, kept as the seed states it.
    const std::int64_t id = lock_of(j).session;
    std::set<std::pair<std::uint64_t, std::uint32_t>> rest;
    rest.swap(best->ready);
    expire(j, q);
    for (const auto& [seq, other] : rest) {
      E.level.remove(w_.jobs[other]);
      expire(other, q);
    }
    const auto it = E.sessions.find(id);
    if (it != E.sessions.end() && it->second.ready.empty() && !it->second.out && it->second.holder == ci) {
      --r.sessions;
      E.sessions.erase(it);
    }
  }
}

// Every client with credit is offered the next message it may take; one that may take none now
// sits out until the next dispatch of this queue (a settlement, a new message, a lapse).
void AzureServiceBus::dispatch_sessions(int q) {
  for (auto& c : w_.consumers) {
    if (c.queue() == q) give_credit(c);
  }
  Dispatcher& ring = dispatchers_[static_cast<std::size_t>(q)];
  bool popped = false;
  while (!ring.empty()) {
    const int ci = take_turn(ring, receivers_);
    const std::uint64_t before = entities_[q].level.ready;
    const std::uint32_t j = next_for(q, ci);
    popped = popped || entities_[q].level.ready != before;
    if (j == kNoIndex) continue;
    deliver(j, q, ci, -1, Link::Own);
  }
  if (popped) ready_changed(q);
}

}  // namespace brokersim
