package dev.idem.payments;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;

/**
 * The gateways' RSA public keys and their SHA256withRSA signatures, and the merchant's own private
 * keys that sign what idem asks of them, with the JDK alone.
 */
public final class Rsa {

    private static final String CERTIFICATE = "-----BEGIN CERTIFICATE-----";

    private Rsa() {}

    /**
     * A public key as the gateway's console gives it: PEM {@code PUBLIC KEY}, a PEM certificate
     * (WeChat Pay's platform certificates), or the bare base64 of the key (Alipay's console).
     * Called at start-up: what is wrong is named by {@code name}, never by the key's text.
     */
    public static PublicKey publicKey(String name, String pem) {
        String text = pem.trim();
        try {
            if (text.startsWith(CERTIFICATE)) {
                return CertificateFactory.getInstance("X.509")
                        .generateCertificate(new ByteArrayInputStream(text.getBytes(StandardCharsets.US_ASCII)))
                        .getPublicKey();
            }
            String base64 = text.replaceAll("-----(BEGIN|END) PUBLIC KEY-----", "").replaceAll("\\s", "");
            return KeyFactory.getInstance("RSA")
                    .generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(base64)));
        } catch (GeneralSecurityException | IllegalArgumentException unreadable) {
            throw new IllegalArgumentException(name + " is not an RSA public key in PEM (PUBLIC KEY or CERTIFICATE)");
        }
    }

    /**
     * A private key as the gateways' tools give it: PKCS#8, in PEM ({@code PRIVATE KEY}) or bare
     * base64. Called at start-up: what is wrong is named by {@code name}, never by the key's text.
     */
    public static PrivateKey privateKey(String name, String pem) {
        String text = pem.trim();
        if (text.startsWith("-----BEGIN RSA PRIVATE KEY-----")) {
            throw new IllegalArgumentException(name + " is PKCS#1 (BEGIN RSA PRIVATE KEY): convert it to PKCS#8 "
                    + "(openssl pkcs8 -topk8 -nocrypt)");
        }
        String base64 = text.replaceAll("-----(BEGIN|END) PRIVATE KEY-----", "").replaceAll("\\s", "");
        try {
            return KeyFactory.getInstance("RSA")
                    .generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(base64)));
        } catch (GeneralSecurityException | IllegalArgumentException unreadable) {
            throw new IllegalArgumentException(name + " is not an RSA private key in PKCS#8 (PEM PRIVATE KEY or base64)");
        }
    }

    /** The base64 SHA256withRSA signature of {@code content} by {@code key}. */
    public static String sign(PrivateKey key, byte[] content) {
        try {
            Signature signer = Signature.getInstance("SHA256withRSA");
            signer.initSign(key);
            signer.update(content);
            return Base64.getEncoder().encodeToString(signer.sign());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA256withRSA is part of every JDK, and the key was read at start-up", e);
        }
    }

    /** Whether {@code base64Signature} is {@code content}'s SHA256withRSA signature by {@code key}. */
    public static boolean verifies(PublicKey key, byte[] content, String base64Signature) {
        try {
            Signature verifier = Signature.getInstance("SHA256withRSA");
            verifier.initVerify(key);
            verifier.update(content);
            return verifier.verify(Base64.getDecoder().decode(base64Signature.trim()));
        } catch (GeneralSecurityException | IllegalArgumentException notASignature) {
            return false;
        }
    }
}
