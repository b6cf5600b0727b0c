// Dead-letter routing through the export's exchanges and bindings, as rabbit_exchange:route does
// (direct, fanout, topic and headers exchanges, exchange-to-exchange bindings, alternate exchanges).
#include <optional>

#include "experiments/cli/import/rabbitmq_definitions.hpp"
#include "experiments/cli/loader/checks.hpp"

namespace brokersim::import::rabbitmq {

namespace {

// rabbit_exchange_type_topic: a key's words split at '.', the empty key having none.
std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  std::size_t start = 0;
  for (;;) {
    const auto dot = s.find('.', start);
    out.push_back(s.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return out;
    start = dot + 1;
  }
}

// '*' is one word, '#' zero or more. By dynamic programming over (pattern words, key words), so
// that a binding of many '#' costs |pattern| x |key|, not the exponential backtracking search.
bool topic_match(const std::vector<std::string>& pattern, const std::vector<std::string>& key) {
  // reach[k]: the first p pattern words can match the first k key words.
  std::vector<char> reach(key.size() + 1, 0), next(key.size() + 1);
  reach[0] = 1;
  for (const auto& w : pattern) {
    if (w == "#") {
      char any = 0;
      for (std::size_t k = 0; k <= key.size(); ++k) next[k] = any = any || reach[k];
    } else {
      next[0] = 0;
      for (std::size_t k = 1; k <= key.size(); ++k) next[k] = reach[k - 1] && (w == "*" || w == key[k - 1]);
    }
    reach.swap(next);
  }
  return reach[key.size()];
}


// rabbit_exchange_type_headers: a binding's arguments other than x-* are the headers it matches;
// x-match "all" (the default, and "all-with-x") of no headers matches every message, "any" of none
// matches none. nullopt: the answer depends on the message's headers.
std::optional<bool> headers_binding_matches(const json& args) {
  std::string mode = "all";
  if (args.contains("x-match") && args["x-match"].is_string()) mode = args["x-match"].get<std::string>();
  // all-with-x and any-with-x also match on x- headers; the others skip them.
  const bool with_x = mode == "all-with-x" || mode == "any-with-x";
  bool conditions = false;
  for (auto it = args.begin(); it != args.end(); ++it)
    if (it.key() != "x-match" && (with_x || it.key().rfind("x-", 0) != 0)) conditions = true;
  if (conditions) return std::nullopt;
  return mode == "all" || mode == "all-with-x";
}

}  // namespace

// The queues (raw names) a message with `key` published to exchange `start` reaches, as
// rabbit_exchange:route does: each exchange's matching bindings, exchange-to-exchange bindings
// followed (each exchange once), and an exchange that routes the message nowhere hands it to its
// alternate exchange. A worklist, not recursion: a chain of bindings is as long as the file makes it.
Route route(const Topology& t, const std::string& vhost, const std::string& start, const std::string& key) {
  Route r;
  if (start.empty()) {  // the default exchange: the queue named by the routing key
    r.queues.insert(key);
    return r;
  }
  const auto key_words = words(key);
  std::set<std::string> seen{start};
  std::vector<std::string> pending{start};
  while (!pending.empty()) {
    const std::string name = std::move(pending.back());
    pending.pop_back();
    std::string type;
    const Exchange* exchange = nullptr;
    const auto it = t.exchanges.find({vhost, name});
    if (it != t.exchanges.end()) {
      exchange = &it->second;
      type = exchange->type;
    } else if (name == "amq.direct" || name == "amq.fanout" || name == "amq.topic" || name == "amq.headers" ||
               name == "amq.match") {
      type = name == "amq.match" ? "headers" : name.substr(4);
    } else {
      r.problems.push_back("exchange " + loader::quoted(name) +
                           " is not in the file (RabbitMQ drops dead letters to a missing exchange)");
      continue;
    }
    if (type != "direct" && type != "fanout" && type != "topic" && type != "headers") {
      r.unknown.push_back("exchange " + loader::quoted(name) + " has type " + loader::quoted(type) +
                          ", whose routing brokersim does not know");
      continue;
    }
    bool routed = false, depends = false;
    if (const auto bound = t.by_source.find({vhost, name}); bound != t.by_source.end()) {
      for (const std::size_t i : bound->second) {
        const Binding& b = t.bindings[i];
        bool hit = false;
        if (type == "headers") {
          const auto m = headers_binding_matches(b.arguments);
          if (!m) {
            depends = true;
            r.unknown.push_back("headers exchange " + loader::quoted(name) + " binds " +
                                (b.destination_type == "exchange" ? "exchange " : "queue ") + loader::quoted(b.destination) +
                                " on message headers " + b.arguments.dump());
            continue;
          }
          hit = *m;
        } else {
          hit = type == "fanout" || (type == "direct" && b.routing_key == key) ||
                (type == "topic" && topic_match(words(b.routing_key), key_words));
        }
        if (!hit) continue;
        routed = true;
        if (b.destination_type != "exchange")
          r.queues.insert(b.destination);
        else if (b.destination.empty())
          r.queues.insert(key);
        else if (seen.insert(b.destination).second)
          pending.push_back(b.destination);
      }
    }
    // Unroutable here: the alternate exchange takes it (unless headers may yet have matched).
    if (!routed && !depends && exchange && !exchange->alternate.empty() && seen.insert(exchange->alternate).second)
      pending.push_back(exchange->alternate);
  }
  return r;
}

}  // namespace brokersim::import::rabbitmq
