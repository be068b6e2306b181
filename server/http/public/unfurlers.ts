/**
 * Link-preview bots ("unfurlers"): what chat apps and social sites send to
 * draw a card when someone pastes a link. They must never use up a capped
 * link, so a share link answers them with its landing page (OpenGraph tags,
 * thumbnail) and never with the bytes (docs/public-links.md, "Link previews").
 *
 * Matched on tokens that real previewers put in their User-Agent and that
 * people's browsers do not carry: a person's browser taken for a bot would
 * get the page and never the bytes, so apps whose own (in-app or desktop)
 * browser names the app (Viber, Mattermost, Rocket.Chat, Tumblr) are left out.
 */
const UNFURLERS: ReadonlyArray<RegExp> = [
  /\bWhatsApp\b/i, // WhatsApp ("WhatsApp/2.23.20.0 A"); Signal sends "WhatsApp" too
  /\bSlack(?:bot|-ImgProxy)\b/i, // Slackbot, Slackbot-LinkExpanding 1.0, Slack-ImgProxy
  /\bfacebookexternalhit\b|\bFacebot\b/i, // Facebook, Messenger; iMessage sends "facebookexternalhit/1.1 Facebot Twitterbot/1.0"
  /\bTwitterbot\b/i, // X / Twitter
  /\bDiscordbot\b/i,
  /\bTelegramBot\b/i, // "TelegramBot (like TwitterBot)"
  /\bSkypeUriPreview\b|\bMicrosoftPreview\b|\bBingPreview\b/i, // Skype, Teams, Outlook
  /\bLinkedInBot\b/i,
  /\bApplebot\b/i,
  /\bMastodon\/|\bPleroma\b|\bAkkoma\b|\bMisskey\/|\bCardyb\b/i, // the fediverse's fetchers ("http.rb/5.1.1 (Mastodon/4.2.0; …)"), Bluesky's card fetcher
  /\bredditbot\b/i,
  /\bEmbedly\b|\bIframely\b|\bvkShare\b/i,
  /\bkakaotalk-scrap\b|\bline-poker\b|\bSnap URL Preview\b/i, // KakaoTalk, LINE, Snapchat
  /\bGoogle-PageRenderer\b|\bGoogleOther\b|\bGooglebot\b|\bbingbot\b|\bDuckDuckBot\b|\bYandexBot\b/i,
  /\bPinterest(?:bot)?\/|\bSynapse \(bot\b|\bMattermost-Bot\b|\bNextcloud Server Crawler\b/i, // Pinterest, Matrix (Element), Mattermost, Nextcloud Talk
];

/** Whether `userAgent` is a link-preview bot. */
export function isUnfurler(userAgent: string | undefined | null): boolean {
  if (!userAgent) return false;
  return UNFURLERS.some((re) => re.test(userAgent));
}
