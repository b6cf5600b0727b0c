// broker.kind "amazon-sqs" registered: its factory, its one dead-letter reason, and the figures
// only SQS has, its ReceiveMessage responses by the messages each carried (run --json
// `receives`, the text summary's "Receives" line).
#include <cstdio>

#include "models/broker_kind.hpp"
#include "models/brokers/amazon_sqs.hpp"
#include "models/world.hpp"

namespace brokersim {

namespace {

std::unique_ptr<Broker> make_amazon_sqs(World& w) { return std::make_unique<AmazonSqs>(w); }

constexpr DeathReason kReasons[] = {DeathReason::MaxReceiveCount};
std::span<const DeathReason> death_reasons(const BrokerSpec&) { return kReasons; }

// The order AmazonSqs::report writes: responses, messages, their mean, then responses by size 1..10.
constexpr std::size_t kBySize = 3;

const std::vector<BrokerFigure>& figures() {
  static const std::vector<BrokerFigure> table = [] {
    std::vector<BrokerFigure> t{
        {{"receives", "responses"}, "responses", "ReceiveMessage responses after the warm-up", true},
        {{"receives", "messages"}, "messages", "messages those responses carried", true},
        {{"receives", "mean_per_response"}, "messages", "messages per response", false}};
    for (std::size_t n = 1; n <= kMaxReceiveBatch; ++n)
      t.push_back({{"receives", "by_size", std::to_string(n)}, "responses",
                   "responses that carried " + std::to_string(n) + " message" + (n == 1 ? "" : "s"), true});
    return t;
  }();
  return table;
}

void summary(std::span<const double> f, std::string (*grouped)(std::uint64_t), std::ostream& out) {
  const auto count = [&](std::size_t i) { return static_cast<std::uint64_t>(f[i]); };
  std::string sizes;
  for (std::size_t n = 1; n <= kMaxReceiveBatch; ++n)
    if (count(kBySize + n - 1)) sizes += (sizes.empty() ? "" : ", ") + std::to_string(n) + ": " + grouped(count(kBySize + n - 1));
  char mean[32];
  std::snprintf(mean, sizeof mean, "%.2f", f[2]);
  out << "Receives " << grouped(count(0)) << " responses carried " << grouped(count(1)) << " messages, " << mean
      << " per response" << (sizes.empty() ? "" : " (by size " + sizes + ")") << '\n';
}

}  // namespace

// A long poll is answered when there is something to return: no response carries 0 messages.
void AmazonSqs::report(std::vector<double>& out) const {
  std::uint64_t responses = 0, messages = 0;
  for (std::size_t n = 1; n <= kMaxReceiveBatch; ++n) {
    responses += receives_by_size_[n];
    messages += n * receives_by_size_[n];
  }
  out = {static_cast<double>(responses), static_cast<double>(messages),
         responses ? static_cast<double>(messages) / static_cast<double>(responses) : 0.0};
  for (std::size_t n = 1; n <= kMaxReceiveBatch; ++n) out.push_back(static_cast<double>(receives_by_size_[n]));
}

// A client with prefetch 0 receives what its slots take (up to its batch size), nothing ahead.
const BrokerKindModel kAmazonSqsKind{"amazon-sqs", make_amazon_sqs, death_reasons, 0, figures, summary};

}  // namespace brokersim
