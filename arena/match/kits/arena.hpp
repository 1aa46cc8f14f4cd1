// arena.hpp: the C++ bot kit, the bot side of the arena's protocol (docs/protocol.md,
// version 3, as arena/match/botkit.py speaks it) for a bot written as one .cpp file. The
// `cpp` runtime (arena/match/runtimes.py) compiles the bot with g++ -std=c++17 with this
// header in the include path (in the sandbox: /kit/arena.hpp, read-only):
//
//     #include "arena.hpp"
//
//     arena::Move play(const arena::Observation& observation) {
//         return observation.legal_moves[0];
//     }
//
// `play` returns one of `observation.legal_moves`. The kit has `main`: it answers the
// referee's messages, folds each request's new events into the round's state (so `play`
// sees the whole observation, the same fields as the Python kit's) and writes the replies.
// What the bot prints (std::cout, printf) goes to standard error, never into the protocol.
// `#define ARENA_NAME "mybot"` before the include names the bot. A bot with memory keeps
// it itself, by `observation.game` (unique within a match). See docs/writing-a-bot.md.
//
// Standard C++17 only: the kit reads the protocol's JSON with its own small reader.

#ifndef ARENA_HPP
#define ARENA_HPP

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace arena {

// --- JSON: the messages' values --------------------------------------------------------

// A JSON value: null, a boolean, a number, a string, an array or an object.
struct Json {
    enum Kind { NUL, BOOL, NUMBER, STRING, ARRAY, OBJECT } kind = NUL;
    bool boolean = false;
    double number = 0;
    std::string text;
    std::vector<Json> items;
    std::map<std::string, Json> members;

    // The member `key` of an object (a null value if it has none).
    const Json& operator[](const std::string& key) const {
        static const Json none;
        auto found = members.find(key);
        return found == members.end() ? none : found->second;
    }
    const Json& operator[](size_t index) const { return items.at(index); }
    bool has(const std::string& key) const { return members.count(key) > 0; }
    bool is_null() const { return kind == NUL; }
    int as_int() const { return static_cast<int>(number); }
    long long as_long() const { return static_cast<long long>(number); }
    size_t size() const { return kind == ARRAY ? items.size() : members.size(); }

    static Json parse(const std::string& text) {
        size_t at = 0;
        Json value = read(text, at);
        skip(text, at);
        if (at != text.size()) fail(text, at);
        return value;
    }

   private:
    [[noreturn]] static void fail(const std::string& text, size_t at) {
        throw std::runtime_error("bad JSON at character " + std::to_string(at) + ": " +
                                 text.substr(0, 80));
    }
    static void skip(const std::string& s, size_t& at) {
        while (at < s.size() && (s[at] == ' ' || s[at] == '\t' || s[at] == '\r' || s[at] == '\n'))
            ++at;
    }
    static void utf8(std::string& out, unsigned code) {
        if (code < 0x80) {
            out += static_cast<char>(code);
        } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
        } else if (code < 0x10000) {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (code >> 18));
            out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
        }
    }
    static unsigned hex4(const std::string& s, size_t& at) {
        if (at + 4 > s.size()) fail(s, at);
        unsigned code = static_cast<unsigned>(std::stoul(s.substr(at, 4), nullptr, 16));
        at += 4;
        return code;
    }
    static std::string string(const std::string& s, size_t& at) {
        std::string out;
        ++at;  // the opening quote
        while (at < s.size() && s[at] != '"') {
            char c = s[at++];
            if (c != '\\') {
                out += c;
                continue;
            }
            if (at >= s.size()) fail(s, at);
            char e = s[at++];
            switch (e) {
                case 'n': out += '\n'; break;
                case 't': out += '\t'; break;
                case 'r': out += '\r'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'u': {
                    unsigned code = hex4(s, at);
                    if (code >= 0xD800 && code < 0xDC00 && s.compare(at, 2, "\\u") == 0) {
                        at += 2;
                        code = 0x10000 + ((code - 0xD800) << 10) + (hex4(s, at) - 0xDC00);
                    }
                    utf8(out, code);
                    break;
                }
                default: out += e;
            }
        }
        if (at >= s.size()) fail(s, at);
        ++at;  // the closing quote
        return out;
    }
    static Json read(const std::string& s, size_t& at) {
        skip(s, at);
        if (at >= s.size()) fail(s, at);
        Json value;
        char c = s[at];
        if (c == '{') {
            value.kind = OBJECT;
            ++at;
            skip(s, at);
            if (at < s.size() && s[at] == '}') return ++at, value;
            while (true) {
                skip(s, at);
                if (at >= s.size() || s[at] != '"') fail(s, at);
                std::string key = string(s, at);
                skip(s, at);
                if (at >= s.size() || s[at] != ':') fail(s, at);
                ++at;
                value.members[key] = read(s, at);
                skip(s, at);
                if (at < s.size() && s[at] == ',') { ++at; continue; }
                if (at < s.size() && s[at] == '}') return ++at, value;
                fail(s, at);
            }
        }
        if (c == '[') {
            value.kind = ARRAY;
            ++at;
            skip(s, at);
            if (at < s.size() && s[at] == ']') return ++at, value;
            while (true) {
                value.items.push_back(read(s, at));
                skip(s, at);
                if (at < s.size() && s[at] == ',') { ++at; continue; }
                if (at < s.size() && s[at] == ']') return ++at, value;
                fail(s, at);
            }
        }
        if (c == '"') {
            value.kind = STRING;
            value.text = string(s, at);
            return value;
        }
        if (s.compare(at, 4, "true") == 0) { value.kind = BOOL; value.boolean = true; at += 4; return value; }
        if (s.compare(at, 5, "false") == 0) { value.kind = BOOL; at += 5; return value; }
        if (s.compare(at, 4, "null") == 0) { at += 4; return value; }
        size_t end = at;
        while (end < s.size() && std::string("+-.0123456789eE").find(s[end]) != std::string::npos) ++end;
        if (end == at) fail(s, at);
        value.kind = NUMBER;
        value.number = std::strtod(s.substr(at, end - at).c_str(), nullptr);
        at = end;
        return value;
    }
};

// A string as a JSON string, quoted.
inline std::string quote(const std::string& text) {
    std::string out = "\"";
    for (unsigned char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char buffer[8];
            std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
            out += buffer;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

// --- values a bot sees -------------------------------------------------------------------

// A tile, high half first: Tile{6, 4}, written "6-4".
struct Tile {
    int high = 0;
    int low = 0;

    // Parse "6-4" (either order).
    static Tile parse(const std::string& text) {
        size_t dash = text.find('-');
        if (dash == std::string::npos) throw std::runtime_error("not a tile: " + text);
        int a = std::stoi(text.substr(0, dash)), b = std::stoi(text.substr(dash + 1));
        return Tile{std::max(a, b), std::min(a, b)};
    }
    // Both halves added: 6-4 has 10.
    int pips() const { return high + low; }
    bool is_double() const { return high == low; }
    // Whether either half shows `pip`.
    bool matches(int pip) const { return high == pip || low == pip; }
    // The half opposite a half showing `pip`.
    int other(int pip) const {
        if (high == pip) return low;
        if (low == pip) return high;
        throw std::invalid_argument("tile " + str() + " has no half " + std::to_string(pip));
    }
    std::string str() const { return std::to_string(high) + "-" + std::to_string(low); }
    bool operator==(const Tile& o) const { return high == o.high && low == o.low; }
    bool operator!=(const Tile& o) const { return !(*this == o); }
    bool operator<(const Tile& o) const {
        return high != o.high ? high < o.high : low < o.low;
    }
};

// `tile` on `end`: 'L' or 'R', or 0 for the first tile of a round (a lead).
struct Move {
    Tile tile;
    char end = 0;

    // Parse "6-4L", "6-4R" or a lead "6-6".
    static Move parse(const std::string& text) {
        char last = text.empty() ? 0 : text.back();
        if (last == 'L' || last == 'R' || last == 'l' || last == 'r') {
            char end = (last == 'L' || last == 'l') ? 'L' : 'R';
            return Move{Tile::parse(text.substr(0, text.size() - 1)), end};
        }
        return Move{Tile::parse(text), 0};
    }
    std::string str() const { return end ? tile.str() + end : tile.str(); }
    bool operator==(const Move& o) const { return tile == o.tile && end == o.end; }
    bool operator!=(const Move& o) const { return !(*this == o); }
};

// One public event of the round: a play (with the points it scored, muggins only), a draw
// (the tile only when it is yours) or a pass.
struct Event {
    enum Kind { PLAY, DRAW, PASS } kind = PASS;
    int seat = 0;
    Move move;                // PLAY
    int points = 0;           // PLAY
    std::optional<Tile> tile; // DRAW: your own draws only

    // Parse "play 0 6-4L", "play 0 5-0R 1", "draw 1", "draw 0 6-4", "pass 1".
    static Event parse(const std::string& text) {
        std::vector<std::string> parts;
        size_t start = 0;
        while (start <= text.size()) {
            size_t space = text.find(' ', start);
            if (space == std::string::npos) space = text.size();
            parts.push_back(text.substr(start, space - start));
            start = space + 1;
        }
        Event event;
        if (parts.size() < 2) throw std::runtime_error("not an event: " + text);
        event.seat = std::stoi(parts[1]);
        if (parts[0] == "play" && (parts.size() == 3 || parts.size() == 4)) {
            event.kind = PLAY;
            event.move = Move::parse(parts[2]);
            event.points = parts.size() == 4 ? std::stoi(parts[3]) : 0;
        } else if (parts[0] == "draw" && parts.size() <= 3) {
            event.kind = DRAW;
            if (parts.size() == 3) event.tile = Tile::parse(parts[2]);
        } else if (parts[0] == "pass" && parts.size() == 2) {
            event.kind = PASS;
        } else {
            throw std::runtime_error("not an event: " + text);
        }
        return event;
    }
};

// What a bot knows when a game starts.
struct GameInfo {
    std::string game;  // the game's id (unique within a match)
    int seat = 0;      // your seat, 0..players-1; play goes to seat+1
    int players = 2;
    bool teams = false;  // seats 0+2 play against 1+3
    std::string rules;   // the rule set's name
    Json params;         // its parameters (params["target"].as_int(); docs/rules.md)
};

// What your bot knows when it must move. Never another hand, never the boneyard's order.
struct Observation {
    std::string game;  // the game's id
    int seat = 0;
    int players = 2;
    bool teams = false;
    std::string rules;
    Json params;
    int round = 0;   // the round's number in the game, from 1
    int leader = 0;  // the seat that led this round
    std::vector<Tile> hand;                    // your tiles, ascending
    std::vector<std::pair<int, int>> line;     // the played tiles, left to right
    std::optional<std::pair<int, int>> ends;   // the open ends (left, right); none: you lead
    std::vector<int> hand_sizes;               // tiles each seat holds
    int boneyard_size = 0;
    int drawable = 0;                          // of the boneyard, how many may still be drawn
    std::vector<int> scores;                   // each side's score (per seat, or per team)
    std::vector<Event> history;                // this round's public events
    std::vector<Move> legal_moves;             // your legal moves, sorted: return one of them

    // Your index into `scores`: your team in team play, else your seat.
    int side() const { return teams ? seat % 2 : seat; }
    // Your partner's seat in team play, else -1.
    int partner() const { return teams ? (seat + 2) % 4 : -1; }
};

// --- one game as this bot has seen it: the round's state, each new event folded in -----------

class GameView {
   public:
    explicit GameView(GameInfo info) : info_(std::move(info)) {}

    // The observation a v3 request stands for (the round's start, if any, then its events).
    Observation fold(const Json& request) {
        if (request.has("round") && !request["round"].is_null()) begin(request["round"]);
        for (const Json& text : request["events"].items) apply(Event::parse(text.text));
        Observation o;
        o.game = info_.game;
        o.seat = info_.seat;
        o.players = info_.players;
        o.teams = info_.teams;
        o.rules = info_.rules;
        o.params = info_.params;
        o.round = round_;
        o.leader = leader_;
        o.hand = hand_;
        o.line.assign(line_.begin(), line_.end());
        if (left_ >= 0) o.ends = std::make_pair(left_, right_);
        o.hand_sizes = sizes_;
        o.boneyard_size = boneyard_;
        o.drawable = drawable_;
        o.scores = scores_;
        o.history = history_;
        for (const Json& text : request["legal_moves"].items) {
            o.legal_moves.push_back(Move::parse(text.text));
        }
        return o;
    }

   private:
    void begin(const Json& start) {
        round_ = start["number"].as_int();
        leader_ = start["leader"].as_int();
        hand_.clear();
        for (const Json& t : start["hand"].items) hand_.push_back(Tile::parse(t.text));
        std::sort(hand_.begin(), hand_.end());
        sizes_.clear();
        for (const Json& n : start["hand_sizes"].items) sizes_.push_back(n.as_int());
        boneyard_ = start["boneyard_size"].as_int();
        drawable_ = start["drawable"].as_int();
        scores_.clear();
        for (const Json& n : start["scores"].items) scores_.push_back(n.as_int());
        line_.clear();
        left_ = right_ = -1;
        history_.clear();
    }

    void apply(const Event& event) {
        history_.push_back(event);
        int who = event.seat;
        if (event.kind == Event::PLAY) {
            const Tile& tile = event.move.tile;
            if (event.move.end == 0) {
                left_ = tile.high;
                right_ = tile.low;
                line_.emplace_back(tile.high, tile.low);
            } else if (event.move.end == 'L') {
                int old = left_;
                left_ = tile.other(old);
                line_.emplace_front(left_, old);
            } else {
                int old = right_;
                right_ = tile.other(old);
                line_.emplace_back(old, right_);
            }
            sizes_.at(who) -= 1;
            if (who == info_.seat) {
                auto found = std::find(hand_.begin(), hand_.end(), tile);
                if (found == hand_.end()) throw std::runtime_error("played a tile not held");
                hand_.erase(found);
            }
            if (event.points) scores_.at(info_.teams ? who % 2 : who) += event.points;
        } else if (event.kind == Event::DRAW) {
            sizes_.at(who) += 1;
            boneyard_ -= 1;
            drawable_ -= 1;
            if (who == info_.seat && event.tile) {
                hand_.insert(std::upper_bound(hand_.begin(), hand_.end(), *event.tile), *event.tile);
            }
        }
    }

    GameInfo info_;
    int round_ = -1, leader_ = 0, left_ = -1, right_ = -1, boneyard_ = 0, drawable_ = 0;
    std::vector<Tile> hand_;
    std::deque<std::pair<int, int>> line_;
    std::vector<int> sizes_, scores_;
    std::vector<Event> history_;
};

}  // namespace arena

// The bot's move: one of observation.legal_moves (defined by the bot's file).
arena::Move play(const arena::Observation& observation);

#ifndef ARENA_NO_MAIN
namespace arena {

constexpr int PROTOCOL_VERSION = 3;

// The reply to one request: the given notation of the legal move `play` chose, or an error.
inline std::string act(GameView& view, const Json& request) {
    Observation observation = view.fold(request);
    Move chosen;
    try {
        chosen = ::play(observation);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "play raised: %s\n", error.what());
        return "{\"error\":\"crash\",\"message\":" + quote(std::string("exception: ") + error.what()) + "}";
    } catch (...) {
        return "{\"error\":\"crash\",\"message\":\"play threw something not a std::exception\"}";
    }
    const std::vector<Json>& given = request["legal_moves"].items;
    std::string legal;
    for (size_t i = 0; i < observation.legal_moves.size(); ++i) {
        if (observation.legal_moves[i] == chosen) return quote(given[i].text);
        legal += (i ? ", " : "") + observation.legal_moves[i].str();
    }
    return "{\"error\":\"illegal\",\"message\":" +
           quote("answered " + chosen.str() + ", which is not legal (legal: " + legal + ")") + "}";
}

// Answer the referee's messages on stdin, replies to `out`, until quit or end of input.
inline int serve(std::FILE* out) {
    std::map<std::string, GameView> views;
    std::string line;
    auto send = [out](const std::string& message) {
        std::fputs(message.c_str(), out);
        std::fputc('\n', out);
        std::fflush(out);
    };
    while (std::getline(std::cin, line)) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        Json message = Json::parse(line);
        const std::string& kind = message["type"].text;
        if (kind == "hello") {
            const Json& offered = message.has("max_protocol") ? message["max_protocol"] : message["protocol"];
            int protocol = std::max(1, std::min(offered.as_int(), PROTOCOL_VERSION));
            std::string reply = "{\"type\":\"hello\",\"protocol\":" + std::to_string(protocol);
#ifdef ARENA_NAME
            reply += ",\"bot\":" + quote(ARENA_NAME);
#endif
            send(reply + "}");
        } else if (kind == "start") {
            GameInfo info;
            info.game = message["game"].text;
            info.seat = message["seat"].as_int();
            info.players = message["players"].as_int();
            info.teams = message["teams"].boolean;
            info.rules = message["rules"]["name"].text;
            info.params = message["rules"]["params"];
            std::string game = info.game;
            views.erase(game);
            views.emplace(game, GameView(std::move(info)));
        } else if (kind == "act") {
            std::string reply = "{\"type\":\"moves\",\"seq\":" + std::to_string(message["seq"].as_long()) + ",\"moves\":[";
            bool first = true;
            for (const Json& request : message["requests"].items) {
                auto view = views.find(request["game"].text);
                std::string answer = view == views.end()
                    ? "{\"error\":\"crash\",\"message\":\"no game " + request["game"].text + " was started\"}"
                    : act(view->second, request);
                reply += (first ? "" : ",") + answer;
                first = false;
            }
            send(reply + "]}");
        } else if (kind == "end") {
            views.erase(message["game"].text);
        } else if (kind == "quit") {
            return 0;
        } else {
            send("{\"type\":\"error\",\"message\":" + quote("unknown message type " + kind) + "}");
        }
    }
    return 0;
}

}  // namespace arena

int main() {
    // The bot's prints must not corrupt the protocol: file descriptor 1 becomes stderr, and
    // the protocol keeps a private copy of the real stdout.
    std::FILE* out = fdopen(dup(1), "w");
    dup2(2, 1);
    std::ios::sync_with_stdio(false);
    if (out == nullptr) return 2;
    try {
        return arena::serve(out);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "arena.hpp: %s\n", error.what());
        return 3;
    }
}
#endif  // ARENA_NO_MAIN

#endif  // ARENA_HPP
