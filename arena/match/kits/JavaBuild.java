import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * The {@code java} runtime's compile step (arena/match/runtimes.py), run in the compile
 * sandbox as {@code java JavaBuild.java SOURCE JAR KIT_DIR}: compiles the author's SOURCE (one
 * file, under the name the author gave it, whatever its public class is called) with the kit's
 * sources in KIT_DIR, finds the one public class implementing {@code arena.Player}, and writes
 * JAR: the classes, {@code arena/bot} naming the bot's class, and a manifest whose main class
 * is the kit ({@code java -jar JAR} runs the bot). javac's messages go to standard error as
 * javac prints them, naming SOURCE; the exit status is 1 when there is no bot to run.
 */
public final class JavaBuild {
    public static void main(String[] args) throws IOException {
        if (args.length != 3) {
            System.err.println("usage: java JavaBuild.java SOURCE JAR KIT_DIR");
            System.exit(2);
        }
        String name = Path.of(args[0]).getFileName().toString();
        String source;
        try {
            source = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(Files.readAllBytes(Path.of(args[0]))))
                    .toString();
        } catch (CharacterCodingException exc) {
            System.err.println(name + ": not UTF-8 text: save the file as UTF-8");
            System.exit(1);
            return;
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        Path classes = Files.createTempDirectory("classes");
        StringWriter printed = new StringWriter();
        PrintWriter err = new PrintWriter(printed, true);
        try (StandardJavaFileManager files = javac.getStandardFileManager(null, null, StandardCharsets.UTF_8);
                Stream<Path> listed = Files.list(Path.of(args[2]))) {
            List<JavaFileObject> units = new ArrayList<>();
            units.add(new Source(name, source));
            List<Path> kit = listed.filter(p -> p.toString().endsWith(".java")).sorted().toList();
            files.getJavaFileObjectsFromPaths(kit).forEach(units::add);
            List<String> options = List.of("-d", classes.toString(), "--release", "17", "-g",
                    "-proc:none", "-implicit:none", "-Xmaxerrs", "20", "-Xlint:none",
                    "-classpath", classes.toString(), "-sourcepath", classes.toString());
            boolean compiled = javac.getTask(err, files, null, options, null, units).call();
            System.err.print(said(printed.toString(), name));
            if (!compiled) {
                System.exit(1);
            }
        }
        String bot = botClass(classes, name);
        try (OutputStream out = Files.newOutputStream(Path.of(args[1]));
                JarOutputStream jar = new JarOutputStream(out, manifest());
                Stream<Path> walked = Files.walk(classes)) {
            for (Path path : walked.filter(Files::isRegularFile).sorted().toList()) {
                jar.putNextEntry(new JarEntry(classes.relativize(path).toString().replace('\\', '/')));
                jar.write(Files.readAllBytes(path));
                jar.closeEntry();
            }
            jar.putNextEntry(new JarEntry("arena/bot"));
            jar.write(bot.getBytes(StandardCharsets.UTF_8));
            jar.closeEntry();
        }
    }

    /** What javac printed, and, when javac itself gave up (a source nested too deeply for
     * its stack, too big for its memory), a sentence saying so first. */
    private static String said(String printed, String name) {
        String[] gaveUp = {"java.lang.StackOverflowError", "ran out of stack: the source is nested"
                + " too deeply", "java.lang.OutOfMemoryError", "ran out of memory: the source is too"
                + " big"};
        for (int i = 0; i < gaveUp.length; i += 2) {
            if (printed.contains(gaveUp[i])) {
                return name + ": javac " + gaveUp[i + 1] + " (" + gaveUp[i] + ")\n" + printed;
            }
        }
        return printed;
    }

    /** The one public class of the source implementing arena.Player (its classes are loaded,
     * never initialised: none of the author's code runs here). */
    private static String botClass(Path classes, String name) throws IOException {
        List<String> found = new ArrayList<>();
        try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()},
                        ClassLoader.getPlatformClassLoader());
                Stream<Path> walked = Files.walk(classes)) {
            Class<?> player = loader.loadClass("arena.Player");
            for (Path path : walked.filter(p -> p.toString().endsWith(".class")).toList()) {
                String file = classes.relativize(path).toString();
                String className = file.substring(0, file.length() - 6).replace('/', '.');
                if (className.startsWith("arena.") || className.contains("$")) {
                    continue;
                }
                Class<?> candidate = Class.forName(className, false, loader);
                int modifiers = candidate.getModifiers();
                if (player.isAssignableFrom(candidate) && java.lang.reflect.Modifier.isPublic(modifiers)
                        && !candidate.isInterface() && !java.lang.reflect.Modifier.isAbstract(modifiers)) {
                    found.add(className);
                }
            }
        } catch (ReflectiveOperationException | LinkageError exc) {
            System.err.println(name + ": its classes cannot be loaded: " + exc);
            System.exit(1);
        }
        if (found.size() != 1) {
            System.err.println(name + ": " + (found.isEmpty()
                    ? "no public class implements arena.Player: write `public class MyBot implements"
                            + " Player` with a method `public Move play(Observation observation)`"
                    : "several public classes implement arena.Player (" + String.join(", ", found)
                            + "): a bot is one"));
            System.exit(1);
        }
        return found.get(0);
    }

    private static Manifest manifest() {
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, "arena.Kit");
        return manifest;
    }

    /** The author's source, compiled under the name they gave it (javac's messages name it),
     * whatever its public class is called. */
    private static final class Source extends SimpleJavaFileObject {
        private final String name;
        private final String text;

        Source(String name, String text) {
            super(URI.create("string:///" + name.replaceAll("[^A-Za-z0-9._-]", "_")), Kind.SOURCE);
            this.name = name;
            this.text = text;
        }

        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return text;
        }

        @Override
        public boolean isNameCompatible(String simpleName, Kind kind) {
            return kind == Kind.SOURCE;
        }

        @Override
        public String getName() {
            return name;
        }
    }
}
