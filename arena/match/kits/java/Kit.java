package arena;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The Java bot kit: the bot side of the arena's protocol (docs/protocol.md, version 3, as
 * arena/match/botkit.py speaks it) for a bot written as one class implementing
 * {@link Player}. Compiled with the bot; run as (the {@code java} runtime):
 *
 * <pre>java [flags] -jar bot.jar</pre>
 *
 * <p>(the jar arena/match/kits/JavaBuild.java makes, naming the bot's class in {@code arena/bot};
 * or {@code java -cp CLASSES arena.Kit BOT_CLASS}).
 *
 * <p>The referee sends each game's new events; the kit folds them into the round's state and
 * hands the bot a fresh {@link Observation} at each decision. What the bot prints
 * ({@code System.out} and {@code System.err}) goes to standard error, never into the
 * protocol.
 *
 * <p>Equal terms: before it answers the handshake the kit plays practice games against itself
 * through the same code as real ones (the bot's {@code play} included, its output discarded):
 * {@link #WARM_DECISIONS} decisions, or until the process has used {@link #WARM_CPU_MILLIS} ms
 * of CPU time (or {@link #WARM_WALL_MILLIS} ms have passed), so the JVM's start and its
 * compilation of the hot code are paid from the start-up allowance, not the move clock. See
 * docs/writing-a-bot.md.
 */
public final class Kit {
    /** The protocol version the kit speaks. */
    public static final int PROTOCOL_VERSION = 3;
    /** Decisions of practice games played before the handshake, at most. */
    public static final int WARM_DECISIONS = 2000;
    /** The process's CPU time (its start included) after which practice stops, in ms. */
    public static final int WARM_CPU_MILLIS = 1000;
    /** Wall-clock time after which practice stops, in ms (a bot that sleeps). */
    public static final int WARM_WALL_MILLIS = 2000;

    private final Constructor<? extends Player> make;
    private final String name;
    private final Map<String, GameView> views = new HashMap<>();
    private final Map<String, Player> bots = new HashMap<>();
    private final Map<String, Throwable> broken = new HashMap<>();
    private final Map<String, Event> events = new HashMap<>();

    private Kit(Class<? extends Player> bot) throws NoSuchMethodException {
        this.make = bot.getConstructor();
        this.name = nameOf(bot);
    }

    public static void main(String[] args) throws IOException {
        // The protocol's channel is a private copy of standard output; the bot's prints go
        // to standard error.
        PrintStream err = System.err;
        OutputStream protocol = new FileOutputStream(FileDescriptor.out);
        System.setOut(err);
        String botClass = args.length == 1 ? args[0] : built();
        if (args.length > 1 || botClass == null) {
            err.println("usage: java -jar bot.jar, or java -cp CLASSES arena.Kit BOT_CLASS");
            System.exit(2);
        }
        Kit kit;
        Kit practice;
        try {
            kit = new Kit(load(botClass));
            practice = new Kit(load(botClass));
        } catch (LoadError exc) {
            err.println("botkit: " + exc.getMessage());
            System.exit(3);
            return;
        } catch (NoSuchMethodException exc) {
            err.println("botkit: " + botClass + " has no public constructor that takes nothing");
            System.exit(3);
            return;
        }
        practice.warmUp();
        BufferedReader in = new BufferedReader(
                new InputStreamReader(new FileInputStream(FileDescriptor.in), StandardCharsets.UTF_8),
                1 << 16);
        System.exit(kit.serve(in, protocol));
    }

    /** The bot's class as the jar names it ({@code arena/bot}), or null. */
    private static String built() throws IOException {
        try (InputStream named = Kit.class.getResourceAsStream("bot")) {
            return named == null ? null : new String(named.readAllBytes(), StandardCharsets.UTF_8).strip();
        }
    }

    /** The bot's class, checked. */
    @SuppressWarnings("unchecked")
    private static Class<? extends Player> load(String name) throws LoadError {
        Class<?> found;
        try {
            found = Class.forName(name, true, Kit.class.getClassLoader());
        } catch (ClassNotFoundException exc) {
            throw new LoadError("no class " + name + " was compiled (a bot is one public class)");
        } catch (ExceptionInInitializerError exc) {
            throw new LoadError(name + " failed at load: " + errorLine(exc.getCause()));
        } catch (LinkageError exc) {
            throw new LoadError(name + " cannot be loaded: " + exc);
        }
        if (!Player.class.isAssignableFrom(found)) {
            throw new LoadError(name + " does not implement arena.Player (write: public class "
                    + name + " implements Player)");
        }
        if (!Modifier.isPublic(found.getModifiers()) || Modifier.isAbstract(found.getModifiers())) {
            throw new LoadError(name + " must be a public class that is not abstract");
        }
        return (Class<? extends Player>) found;
    }

    /** {@code public static final String NAME} of the bot's class, else the class's name. */
    private static String nameOf(Class<?> bot) {
        try {
            Field field = bot.getField("NAME");
            if (Modifier.isStatic(field.getModifiers()) && field.get(null) instanceof String text
                    && !text.isBlank()) {
                return text.strip().length() > 64 ? text.strip().substring(0, 64) : text.strip();
            }
        } catch (ReflectiveOperationException | RuntimeException exc) {
            // no name of its own
        }
        return bot.getSimpleName();
    }

    // --- the protocol loop ---------------------------------------------------------------

    private int serve(BufferedReader in, OutputStream out) throws IOException {
        StringBuilder reply = new StringBuilder(256);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            Object parsed = Json.parse(line);
            if (!(parsed instanceof Map<?, ?> message)) {
                throw new IllegalArgumentException("not a JSON object: " + line);
            }
            reply.setLength(0);
            boolean quit = handle(message, reply);
            if (reply.length() > 0) {
                reply.append('\n');
                out.write(reply.toString().getBytes(StandardCharsets.UTF_8));
                out.flush();
            }
            if (quit) {
                return 0;
            }
        }
        return 0;
    }

    /** Handles one message; its answer (if any) in {@code reply}; whether it was quit. */
    private boolean handle(Map<?, ?> message, StringBuilder reply) {
        Object type = message.get("type");
        if ("act".equals(type)) {
            reply.append("{\"type\":\"moves\",\"seq\":");
            Json.write(reply, message.get("seq"));
            reply.append(",\"moves\":[");
            List<?> requests = (List<?>) message.get("requests");
            for (int i = 0; i < requests.size(); i++) {
                reply.append(i > 0 ? "," : "");
                act((Map<?, ?>) requests.get(i), reply);
            }
            reply.append("]}");
        } else if ("start".equals(type)) {
            start(message);
        } else if ("end".equals(type)) {
            end(message);
        } else if ("hello".equals(type)) {
            Object offered = message.containsKey("max_protocol")
                    ? message.get("max_protocol") : message.get("protocol");
            if (!(offered instanceof Long version) || version < PROTOCOL_VERSION) {
                System.err.println("botkit: the Java kit speaks protocol version "
                        + PROTOCOL_VERSION + "; the referee offered " + offered);
                System.exit(3);
            }
            reply.append("{\"type\":\"hello\",\"protocol\":").append(PROTOCOL_VERSION);
            reply.append(",\"bot\":");
            Json.write(reply, name);
            reply.append('}');
        } else if ("quit".equals(type)) {
            return true;
        } else {
            reply.append("{\"type\":\"error\",\"message\":");
            Json.write(reply, "unknown message type " + Json.write(type));
            reply.append('}');
        }
        return false;
    }

    private void start(Map<?, ?> message) {
        Map<?, ?> rules = (Map<?, ?>) message.get("rules");
        GameInfo info = new GameInfo(
                (String) message.get("game"),
                ((Long) message.get("seat")).intValue(),
                ((Long) message.get("players")).intValue(),
                (Boolean) message.get("teams"),
                (String) rules.get("name"),
                Json.frozen(rules.get("params")));
        views.put(info.game(), new GameView(info, events));
        try {
            Player bot = make.newInstance();
            bots.put(info.game(), bot);
            bot.start(info);
        } catch (InvocationTargetException exc) {
            fail(info.game(), exc.getCause());
        } catch (ReflectiveOperationException | RuntimeException | Error exc) {
            fail(info.game(), exc);
        }
    }

    /** The game's bot failed outside play: the game's next answer is its crash. */
    private void fail(String game, Throwable problem) {
        problem.printStackTrace();
        broken.put(game, problem);
    }

    private void end(Map<?, ?> message) {
        String game = (String) message.get("game");
        views.remove(game);
        broken.remove(game);
        Player bot = bots.remove(game);
        if (bot != null) {
            try {
                Map<String, Object> result = Json.frozen(message.get("result"));
                bot.end(result);
            } catch (RuntimeException | Error exc) { // the game is over: only stderr hears
                exc.printStackTrace();
            }
        }
    }

    /** Folds one request and writes the bot's answer to it. */
    private void act(Map<?, ?> request, StringBuilder reply) {
        String game = (String) request.get("game");
        GameView view = views.get(game);
        List<?> given = (List<?>) request.get("legal_moves");
        Observation observation = view.fold(request);
        Throwable problem = broken.get(game);
        Player bot = bots.get(game);
        if (problem != null || bot == null) {
            crash(reply, problem == null ? new IllegalStateException("no bot") : problem);
            return;
        }
        Move move;
        try {
            move = bot.play(observation);
        } catch (RuntimeException | Error exc) { // the bot's own code: its crash
            exc.printStackTrace();
            crash(reply, exc);
            return;
        }
        List<Move> legal = observation.legalMoves;
        for (int i = 0; i < legal.size(); i++) {
            if (legal.get(i).equals(move)) {
                Json.write(reply, given.get(i));
                return;
            }
        }
        StringBuilder all = new StringBuilder();
        for (Move each : legal) {
            all.append(all.length() > 0 ? ", " : "").append(each);
        }
        String message = move == null
                ? "answered null, which is not a move"
                : "answered " + move + ", which is not legal (legal: " + all + ")";
        reply.append("{\"error\":\"illegal\",\"message\":");
        Json.write(reply, message);
        reply.append('}');
    }

    private void crash(StringBuilder reply, Throwable problem) {
        String line = errorLine(problem);
        reply.append("{\"error\":\"crash\",\"message\":");
        Json.write(reply, line.length() > 500 ? line.substring(0, 500) : line);
        reply.append('}');
    }

    /** {@code Type: message (line N)}: N the line of the bot's file where it went wrong (its
     * first frame that is neither the JDK's, in a module of its own, nor the kit's). */
    static String errorLine(Throwable problem) {
        String text = problem.getClass().getSimpleName()
                + (problem.getMessage() == null ? "" : ": " + problem.getMessage());
        for (StackTraceElement frame : problem.getStackTrace()) {
            if (frame.getModuleName() == null && !frame.getClassName().startsWith("arena.")
                    && frame.getLineNumber() > 0) {
                return text + " (line " + frame.getLineNumber() + ")";
            }
        }
        return text;
    }

    /** The bot's class could not be used: the message says why. */
    private static final class LoadError extends Exception {
        private static final long serialVersionUID = 1L;

        LoadError(String message) {
            super(message);
        }
    }

    // --- warm-up: practice games before the handshake ---------------------------------------

    /** The draw preset's parameters, as a practice game's start names them. */
    private static final String PRACTICE_RULES = "{\"name\":\"draw\",\"params\":{\"max_pip\":6,"
            + "\"players\":[2,3,4],\"hand_size\":{\"2\":7,\"3\":5,\"4\":5},\"reserve\":{\"2\":2,"
            + "\"3\":1,\"4\":1},\"lead\":\"highest-double\",\"draw_limit\":null,\"scoring\":"
            + "\"opponents-minus-own\",\"in_play\":\"none\",\"team_play\":false,\"end\":\"points\","
            + "\"target\":100,\"best_of\":null}}";

    /**
     * Plays practice rounds (seat 0 the bot, seat 1 the first legal move) through
     * {@link #handle}, as the referee's messages would arrive, in a thread of their own and
     * in this kit of their own (never the one that serves the referee), until practice is over
     * ({@link #practiceOver}); the bot's output is discarded meanwhile, and whatever it throws
     * is ignored. A bot stuck in a practice move is stopped (Thread.stop: Java 17 still has it)
     * and left behind.
     */
    @SuppressWarnings({"deprecation", "removal"})
    private void warmUp() {
        PrintStream err = System.err;
        PrintStream nowhere = new PrintStream(OutputStream.nullOutputStream());
        System.setErr(nowhere);
        System.setOut(nowhere);
        wallLimit = System.nanoTime() + WARM_WALL_MILLIS * 1_000_000L;
        Thread rounds = new Thread(() -> {
            Random random = new Random(1);
            StringBuilder reply = new StringBuilder(256);
            try {
                for (int game = 0; !practiceOver(); game++) {
                    practice("practice-" + game, random, reply);
                }
            } catch (RuntimeException | Error exc) {
                // a bot that fails in practice fails in its games: they say so
            }
        }, "arena-practice");
        rounds.setDaemon(true);
        rounds.start();
        try {
            rounds.join(WARM_WALL_MILLIS + 500);
            if (rounds.isAlive()) {
                over = true;
                rounds.stop();
                rounds.join(500);
            }
        } catch (InterruptedException exc) {
            Thread.currentThread().interrupt();
        } finally {
            System.setErr(err);
            System.setOut(err);
        }
    }

    private volatile boolean over;
    private long wallLimit;
    private int practised;
    private int checked = -1;

    /** Whether practice is over: enough decisions, or the CPU or wall-clock time is spent (the
     * CPU time, read from /proc at 72 us a read, every 16 decisions). */
    private boolean practiceOver() {
        if (over || practised >= WARM_DECISIONS || System.nanoTime() > wallLimit) {
            return true;
        }
        if (practised % 16 != 0 || practised == checked) {
            return false;
        }
        checked = practised;
        long cpu = ProcessHandle.current().info().totalCpuDuration().map(d -> d.toMillis()).orElse(0L);
        return cpu > WARM_CPU_MILLIS;
    }

    /** One practice round. */
    private void practice(String game, Random random, StringBuilder reply) {
        handle((Map<?, ?>) Json.parse("{\"type\":\"start\",\"game\":\"" + game
                + "\",\"seat\":0,\"players\":2,\"teams\":false,\"rules\":" + PRACTICE_RULES + "}"),
                reply);
        List<Tile> stock = new ArrayList<>();
        for (int high = 0; high <= 6; high++) {
            for (int low = 0; low <= high; low++) {
                stock.add(Tile.of(high, low));
            }
        }
        Collections.shuffle(stock, random);
        List<List<Tile>> hands = List.of(new ArrayList<>(stock.subList(0, 7)),
                new ArrayList<>(stock.subList(7, 14)));
        ArrayDeque<Tile> boneyard = new ArrayDeque<>(stock.subList(14, 28));
        StringBuilder round = new StringBuilder("{\"number\":1,\"leader\":0,\"hand\":[");
        for (Tile tile : hands.get(0)) {
            round.append(round.charAt(round.length() - 1) == '[' ? "\"" : ",\"").append(tile).append('"');
        }
        round.append("],\"hand_sizes\":[7,7],\"boneyard_size\":14,\"drawable\":12,\"scores\":[0,0]}");
        List<String> news = new ArrayList<>();
        int[] ends = null;
        int passes = 0;
        boolean first = true;
        for (int seat = 0; passes < 2 && !practiceOver(); seat = 1 - seat) {
            List<Tile> hand = hands.get(seat);
            List<Move> legal = legalMoves(hand, ends);
            while (legal.isEmpty() && boneyard.size() > 2) {
                Tile drawn = boneyard.pop();
                hand.add(drawn);
                news.add("draw " + seat + (seat == 0 ? " " + drawn : ""));
                legal = legalMoves(hand, ends);
            }
            if (legal.isEmpty()) {
                news.add("pass " + seat);
                passes++;
                continue;
            }
            passes = 0;
            Move move = legal.get(0);
            if (seat == 0) {
                StringBuilder act = new StringBuilder("{\"type\":\"act\",\"seq\":1,\"requests\":"
                        + "[{\"game\":\"" + game + "\",");
                if (first) {
                    act.append("\"round\":").append(round).append(',');
                    first = false;
                }
                act.append("\"events\":").append(Json.write(news)).append(",\"legal_moves\":");
                act.append(Json.write(legal.stream().map(Move::toString).toList())).append("}]}");
                news.clear();
                reply.setLength(0);
                handle((Map<?, ?>) Json.parse(act.toString()), reply);
                practised++;
                Object answer = ((List<?>) ((Map<?, ?>) Json.parse(reply.toString())).get("moves")).get(0);
                if (answer instanceof String text && legal.contains(Move.parse(text))) {
                    move = Move.parse(text);
                }
            }
            news.add("play " + seat + " " + move);
            hand.remove(move.tile());
            if (ends == null) {
                ends = new int[] {move.tile().high(), move.tile().low()};
            } else if (move.onLeft()) {
                ends[0] = move.tile().other(ends[0]);
            } else {
                ends[1] = move.tile().other(ends[1]);
            }
            if (hand.isEmpty()) {
                break;
            }
        }
        handle((Map<?, ?>) Json.parse("{\"type\":\"end\",\"game\":\"" + game
                + "\",\"result\":{\"termination\":\"target\",\"winners\":[0],\"scores\":[0,0]}}"),
                reply);
    }

    /** The legal moves of {@code hand} at {@code ends} (null: a lead), sorted. */
    private static List<Move> legalMoves(List<Tile> hand, int[] ends) {
        List<Tile> sorted = new ArrayList<>(hand);
        Collections.sort(sorted);
        List<Move> moves = new ArrayList<>();
        for (Tile tile : sorted) {
            if (ends == null) {
                moves.add(new Move(tile, null));
                continue;
            }
            if (tile.matches(ends[0])) {
                moves.add(new Move(tile, "L"));
            }
            if (tile.matches(ends[1])) {
                moves.add(new Move(tile, "R"));
            }
        }
        return moves;
    }
}
