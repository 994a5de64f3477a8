package dev.idem.ops;

import dev.idem.web.Problem;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.core.NewCookie;
import jakarta.ws.rs.core.Response;
import java.security.SecureRandom;
import java.util.Base64;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * The operator console: one page, its script and its style, from the service itself. With an
 * identity provider the page is behind its sign-in ({@link ConsoleSignIn}) and calls the admin API
 * with the session cookie, each change carrying the page's CSRF token; without one, the files load
 * freely ({@link AdminAccess} lets exactly these through) and the page asks for the admin token,
 * keeps it in the tab's sessionStorage and sends it with every call. The policy below lets the page
 * load and call nothing but this service.
 */
@Path(ConsoleResource.PATH)
public class ConsoleResource {

    static final String PATH = "/admin/console";
    /** Made at run time: a generator in the native image's heap would repeat its build's seed. */
    private final SecureRandom random = new SecureRandom();

    private static final String POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
            + "connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

    /** The files, read once: name → type and bytes. */
    private static final Map<String, Asset> ASSETS = Map.of(
            "index.html", Asset.of("index.html", "text/html; charset=utf-8"),
            "console.js", Asset.of("console.js", "text/javascript; charset=utf-8"),
            "console.css", Asset.of("console.css", "text/css; charset=utf-8"));

    private record Asset(String type, byte[] bytes) {
        static Asset of(String name, String type) {
            try (InputStream in = ConsoleResource.class.getResourceAsStream("/console/" + name)) {
                if (in == null) {
                    throw new IllegalStateException("the console's " + name + " is missing from the build");
                }
                return new Asset(type, in.readAllBytes());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    @GET
    public Response page() {
        // a new double-submit token each time the page loads: its script sends it back on changes
        byte[] csrf = new byte[24];
        random.nextBytes(csrf);
        return Response.fromResponse(serve("index.html"))
                .cookie(new NewCookie.Builder(AdminAccess.CSRF_COOKIE).value(Base64.getUrlEncoder().withoutPadding()
                        .encodeToString(csrf)).path("/admin").sameSite(NewCookie.SameSite.STRICT).build())
                .build();
    }

    @GET
    @Path("/{asset}")
    public Response asset(@PathParam("asset") String asset) {
        return ASSETS.containsKey(asset) && !asset.equals("index.html")
                ? serve(asset)
                : Problem.response(404, "NOT_FOUND", "HTTP 404 Not Found");
    }

    private static Response serve(String name) {
        Asset asset = ASSETS.get(name);
        return Response.ok(asset.bytes(), asset.type())
                .header("Content-Security-Policy", POLICY)
                .header("X-Content-Type-Options", "nosniff")
                .header("Referrer-Policy", "no-referrer")
                .header("Cache-Control", "no-cache")
                .build();
    }

    /** The console's own files: the only paths under /admin that need no token. */
    static boolean isConsoleFile(String method, String path) {
        return "GET".equals(method) && (path.equals(PATH) || path.startsWith(PATH + "/") && path.indexOf('/', PATH.length() + 1) < 0);
    }
}
