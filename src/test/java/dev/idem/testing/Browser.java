package dev.idem.testing;

import com.microsoft.playwright.BrowserContext;
import com.microsoft.playwright.BrowserType;
import com.microsoft.playwright.Page;
import com.microsoft.playwright.Playwright;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Debian's Chromium, headless, driven by Playwright as a person would use the console: Playwright's
 * driver from the npm registry ({@code src/test/browser}, which {@code ./idem test} installs), the
 * machine's Node.js, a fresh {@code --user-data-dir}, and the flags of a machine whose only network
 * is the package registries (no background requests, no updates, no sync).
 */
public final class Browser implements AutoCloseable {

    private static final Path BASEDIR = Path.of(System.getProperty("basedir", ".")).toAbsolutePath();
    private static final Path DRIVER = BASEDIR.resolve("src/test/browser/node_modules/playwright-core");
    private static final List<String> FLAGS = List.of("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync");
    private static final String SETUP = "; ./idem test installs it (scripts/lib/browser.sh)";

    private final Playwright playwright;
    private final BrowserContext context;
    private final Path profile;

    private Browser(Playwright playwright, BrowserContext context, Path profile) {
        this.playwright = playwright;
        this.context = context;
        this.profile = profile;
    }

    public static Browser start() {
        Path chromium = Path.of(Optional.ofNullable(System.getenv("IDEM_CHROMIUM")).orElse("/usr/bin/chromium"));
        if (!Files.isExecutable(chromium)) {
            throw new IllegalStateException("no Chromium at " + chromium + SETUP);
        }
        if (!Files.isRegularFile(DRIVER.resolve("cli.js"))) {
            throw new IllegalStateException("Playwright's driver is not in " + DRIVER + SETUP);
        }
        try {
            // Playwright runs <playwright.cli.dir>/package/cli.js with the Node.js it is given
            Path driverDir = BASEDIR.resolve("target/playwright-driver");
            Path link = driverDir.resolve("package");
            Files.createDirectories(driverDir);
            Files.deleteIfExists(link);
            Files.createSymbolicLink(link, DRIVER);
            System.setProperty("playwright.cli.dir", driverDir.toString());
            Path profile = Files.createTempDirectory(BASEDIR.resolve("target"), "chromium-profile-");
            Playwright playwright = Playwright.create(new Playwright.CreateOptions().setEnv(Map.of(
                    "PLAYWRIGHT_NODEJS_PATH", node(),
                    "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")));
            BrowserContext context = playwright.chromium().launchPersistentContext(profile,
                    new BrowserType.LaunchPersistentContextOptions()
                            .setExecutablePath(chromium)
                            .setHeadless(true)
                            .setArgs(FLAGS)
                            .setViewportSize(1440, 1100));
            return new Browser(playwright, context, profile);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A new tab, with its own sessionStorage. */
    public Page newPage() {
        return context.newPage();
    }

    @Override
    public void close() {
        context.close();
        playwright.close();
        try (Stream<Path> files = Files.walk(profile)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException ignored) {
            // a profile left in target/ is cleaned with the build
        }
    }

    private static String node() {
        String configured = System.getenv("PLAYWRIGHT_NODEJS_PATH");
        if (configured != null) {
            return configured;
        }
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
            Path node = Path.of(dir, "node");
            if (Files.isExecutable(node)) {
                return node.toString();
            }
        }
        throw new IllegalStateException("no Node.js (node) on the PATH" + SETUP);
    }
}
