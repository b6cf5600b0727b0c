// Keeps the library non-empty while it is being written; harmless afterwards.
namespace brokersim::analytic { int analytic_anchor = 0; }
